"""Provider ids and config keys: promptfoo spelling -> litellm spelling (pure)."""

from __future__ import annotations

import pytest

from evalrun.errors import ConfigError, Location
from evalrun.providers.ids import default_params, normalise_params, to_litellm_model


@pytest.mark.parametrize(("pid", "model"), [
    ("openai:gpt-4o-mini", "openai/gpt-4o-mini"),
    ("openai:chat:gpt-4o", "openai/gpt-4o"),
    ("openai:completion:gpt-3.5-turbo-instruct", "text-completion-openai/gpt-3.5-turbo-instruct"),
    ("anthropic:messages:claude-3-5-haiku-latest", "anthropic/claude-3-5-haiku-latest"),
    ("anthropic:claude-3-5-haiku-latest", "anthropic/claude-3-5-haiku-latest"),
    ("ollama:chat:llama3", "ollama_chat/llama3"),
    ("ollama:chat:llama3:8b", "ollama_chat/llama3:8b"),
    ("ollama:llama3", "ollama/llama3"),
    ("ollama:llama3:8b", "ollama/llama3:8b"),
    ("ollama:completion:llama3", "ollama/llama3"),
    ("azure:chat:my-deployment", "azure/my-deployment"),
    ("azureopenai:chat:my-deployment", "azure/my-deployment"),
    ("bedrock:anthropic.claude-3-sonnet-20240229-v1:0", "bedrock/anthropic.claude-3-sonnet-20240229-v1:0"),
    ("bedrock:converse:anthropic.claude-3-haiku", "bedrock/converse/anthropic.claude-3-haiku"),
    ("vertex:gemini-1.5-pro", "vertex_ai/gemini-1.5-pro"),
    ("google:gemini-1.5-flash", "gemini/gemini-1.5-flash"),
    ("mistral:mistral-large-latest", "mistral/mistral-large-latest"),
    ("groq:llama3-70b-8192", "groq/llama3-70b-8192"),
    ("openrouter:meta-llama/llama-3-8b-instruct", "openrouter/meta-llama/llama-3-8b-instruct"),
    ("openrouter:meta-llama/llama-3-8b-instruct:free", "openrouter/meta-llama/llama-3-8b-instruct:free"),
    ("together:meta-llama/Llama-3-8b-chat-hf", "together_ai/meta-llama/Llama-3-8b-chat-hf"),
    ("togetherai:meta-llama/Llama-3-8b-chat-hf", "together_ai/meta-llama/Llama-3-8b-chat-hf"),
    ("deepseek:deepseek-chat", "deepseek/deepseek-chat"),
    ("vllm:meta-llama/Llama-3-8B", "hosted_vllm/meta-llama/Llama-3-8B"),
    ("localai:chat:mistral", "openai/mistral"),
    ("llama:default", "openai/default"),
    ("huggingface:text-generation:gpt2", "huggingface/gpt2"),
    ("OpenAI:gpt-4o", "openai/gpt-4o"),
    # litellm ids pass through, ':' inside the model included
    ("openai/gpt-4o-mini", "openai/gpt-4o-mini"),
    ("ollama_chat/llama3:8b", "ollama_chat/llama3:8b"),
    ("bedrock/anthropic.claude-v2:1", "bedrock/anthropic.claude-v2:1"),
    ("gpt-4o-mini", "gpt-4o-mini"),
])
def test_to_litellm_model(pid: str, model: str) -> None:
    assert to_litellm_model(pid) == model


@pytest.mark.parametrize(("pid", "words"), [
    ("", "empty"),
    ("   ", "empty"),
    ("openai:", "no model"),
    ("openai:chat:", "no model"),
    ("ollama:chat::x", "no model"),
    ("nosuch:model", "unknown provider prefix 'nosuch'"),
    ("openai:embedding:text-embedding-3-small", "not a chat"),
    ("openai:gpt 4o", "whitespace"),
    ("/gpt-4o", "provider and a model"),
    ("openai/", "provider and a model"),
])
def test_malformed_ids_raise_config_error_with_hint(pid: str, words: str) -> None:
    with pytest.raises(ConfigError) as info:
        to_litellm_model(pid, loc=Location("suite.yaml", 4), key="providers[0]")
    err = info.value
    assert words in err.message
    assert err.file == "suite.yaml" and err.line == 4 and err.key == "providers[0]"
    assert err.hint and "openai:gpt-4o-mini" in err.hint


def test_normalise_promptfoo_keys() -> None:
    cfg = {"apiBaseUrl": "http://localhost:11434/v1", "apiKey": "sk-1", "temperature": 0, "max_tokens": 64,
           "top_p": 0.9, "stop": ["\n"], "response_format": {"type": "json_object"}, "seed": 7}
    assert normalise_params(cfg) == {
        "api_base": "http://localhost:11434/v1", "api_key": "sk-1", "temperature": 0, "max_tokens": 64,
        "top_p": 0.9, "stop": ["\n"], "response_format": {"type": "json_object"}, "seed": 7}


def test_normalise_litellm_keys_and_unknown_pass_through() -> None:
    cfg = {"api_base": "http://h/v1", "api_key": "k", "num_ctx": 4096, "extra_body": {"x": 1}}
    assert normalise_params(cfg) == cfg


def test_normalise_camel_case_and_promptfoo_specials() -> None:
    out = normalise_params({"maxTokens": 5, "topP": 0.5, "apiHost": "my.azure.com", "timeoutMs": 2500,
                            "headers": {"X-Team": "a"}, "cost": 0.1, "showThinking": False})
    assert out == {"max_tokens": 5, "top_p": 0.5, "api_base": "https://my.azure.com", "timeout": 2.5,
                   "extra_headers": {"X-Team": "a"}}


def test_api_key_envar() -> None:
    assert normalise_params({"apiKeyEnvar": "K"}, env={"K": "secret"}) == {"api_key": "secret"}
    # an explicit apiKey wins, in either order
    assert normalise_params({"apiKey": "a", "apiKeyEnvar": "K"}, env={"K": "b"})["api_key"] == "a"
    assert normalise_params({"apiKeyEnvar": "K", "apiKey": "a"}, env={"K": "b"})["api_key"] == "a"
    with pytest.raises(ConfigError) as info:
        normalise_params({"apiKeyEnvar": "K"}, env={}, loc=Location("s.yaml", 3), key="providers[1].config")
    assert info.value.key == "providers[1].config.apiKeyEnvar" and "export K" in (info.value.hint or "")


def test_default_params_for_local_servers() -> None:
    assert default_params("localai:chat:m", env={})["api_base"] == "http://localhost:8080/v1"
    assert default_params("llama:m", env={"LLAMA_BASE_URL": "http://gpu:9000/v1"})["api_base"] == "http://gpu:9000/v1"
    assert default_params("vllm:m", env={})["api_base"] == "http://localhost:8000/v1"
    assert default_params("openai:gpt-4o", env={}) == {}
    assert default_params("openai/gpt-4o", env={}) == {}

