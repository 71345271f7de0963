"""Provider ids and config keys: promptfoo spelling -> litellm spelling (`openai:chat:gpt-4o` -> `openai/gpt-4o`).
Pure (no litellm, no I/O): `evalrun validate` checks provider ids with it without importing litellm.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from evalrun.errors import ConfigError, Location

HINT = ("write a promptfoo id such as `openai:gpt-4o-mini`, `anthropic:messages:claude-3-5-haiku-latest`, "
         "`ollama:chat:llama3`, or a litellm id such as `openai/gpt-4o-mini`")

#: promptfoo provider prefix -> litellm provider prefix (chat models).
_PREFIXES: dict[str, str] = {
    "openai": "openai", "anthropic": "anthropic", "azure": "azure", "azureopenai": "azure", "bedrock": "bedrock",
    "vertex": "vertex_ai", "google": "gemini", "gemini": "gemini", "mistral": "mistral", "groq": "groq",
    "openrouter": "openrouter", "together": "together_ai", "togetherai": "together_ai", "deepseek": "deepseek",
    "fireworks": "fireworks_ai", "perplexity": "perplexity", "cohere": "cohere_chat", "xai": "xai",
    "cerebras": "cerebras", "huggingface": "huggingface", "replicate": "replicate", "cloudflare-ai": "cloudflare",
    "ollama": "ollama", "vllm": "hosted_vllm", "localai": "openai", "lmstudio": "lm_studio",
    "llama": "openai",  # llama.cpp server (OpenAI-compatible /v1)
    "litellm": "litellm_proxy",
}

#: Sub-kinds written between prefix and model (`openai:chat:gpt-4o`) that select the chat endpoint.
_CHAT_KINDS = frozenset({"chat", "messages", "text-generation", "conversational"})
#: Sub-kinds with their own litellm prefix.
_SPECIAL_KINDS: dict[tuple[str, str], str] = {
    ("ollama", "chat"): "ollama_chat",
    ("ollama", "completion"): "ollama",
    ("openai", "completion"): "text-completion-openai",
    ("azure", "completion"): "azure_text",
    ("azureopenai", "completion"): "azure_text",
    ("anthropic", "completion"): "anthropic",
    ("bedrock", "converse"): "bedrock/converse",
    # promptfoo's OpenAI Responses API provider: litellm bridges `openai/responses/MODEL` to that endpoint
    ("openai", "responses"): "openai/responses",
    ("azure", "responses"): "azure/responses",
}
#: Sub-kinds that are not chat/text models at all.
_NOT_CHAT = frozenset({"embedding", "embeddings", "moderation", "image", "assistant", "realtime",
                       "responses", "transcription", "classification", "feature-extraction"})

#: Local OpenAI-compatible servers: default base URL (env var overrides), as promptfoo does.
_LOCAL_SERVERS: dict[str, tuple[str, str]] = {
    "localai": ("LOCALAI_BASE_URL", "http://localhost:8080/v1"),
    "llama": ("LLAMA_BASE_URL", "http://localhost:8080/v1"),
    "vllm": ("VLLM_BASE_URL", "http://localhost:8000/v1"),
    "lmstudio": ("LMSTUDIO_BASE_URL", "http://localhost:1234/v1"),
}


def _malformed(provider_id: str, why: str, loc: Location | None, key: str | None) -> ConfigError:
    return ConfigError.at(loc, f"provider id {provider_id!r} {why}", key=key, hint=HINT)


def to_litellm_model(provider_id: str, *, loc: Location | None = None, key: str | None = None) -> str:
    """The litellm model string for a promptfoo-style or litellm-style id; ConfigError when malformed."""
    pid = provider_id.strip() if isinstance(provider_id, str) else ""
    if not pid:
        raise _malformed(str(provider_id), "is empty", loc, key)
    if any(ch.isspace() for ch in pid):
        raise _malformed(pid, "contains whitespace", loc, key)
    head, sep, rest = pid.partition(":")
    if "/" in head:  # litellm id: provider/model (the model may contain ':' as in bedrock '...-v1:0')
        prov, _, model = head.partition("/")
        if not prov or not (model or rest):
            raise _malformed(pid, "needs both a provider and a model, e.g. `openai/gpt-4o-mini`", loc, key)
        return pid
    if not sep:  # a bare model name: litellm infers the provider (gpt-4o-mini, claude-3-5-sonnet-...)
        return pid
    prefix = head.lower()
    if prefix not in _PREFIXES:
        raise _malformed(pid, f"has an unknown provider prefix {head!r}", loc, key)
    kind, sep2, model = rest.partition(":")
    special = _SPECIAL_KINDS.get((prefix, kind.lower())) if sep2 else None
    if sep2 and (special or kind.lower() in _CHAT_KINDS or kind.lower() in _NOT_CHAT or kind == "completion"):
        if kind.lower() in _NOT_CHAT and not special:
            raise _malformed(pid, f"names a {kind} endpoint, which is not a chat/text model", loc, key)
        target = special or _PREFIXES[prefix]
    else:  # no sub-kind: the rest is the model (it may contain ':' e.g. ollama:llama3:8b, bedrock ...:0)
        model = rest
        target = _PREFIXES[prefix]
    if not model or model.startswith(":"):
        raise _malformed(pid, "has no model name after the provider", loc, key)
    return f"{target}/{model}"


def default_params(provider_id: str, env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Defaults a promptfoo id implies, e.g. the base URL of a local server (`localai:`, `llama:`, `vllm:`)."""
    environ = os.environ if env is None else env
    prefix = provider_id.partition(":")[0].lower() if ":" in provider_id.partition("/")[0] else ""
    if prefix in _LOCAL_SERVERS:
        var, url = _LOCAL_SERVERS[prefix]
        return {"api_base": environ.get(var) or url, "api_key": "sk-local"}
    if prefix == "ollama" and environ.get("OLLAMA_BASE_URL"):  # promptfoo's variable for a non-default server
        return {"api_base": environ["OLLAMA_BASE_URL"]}
    return {}


#: promptfoo's credential variables by provider prefix (promptfoo or litellm spelling), read from a provider's own
#: `env:` (litellm reads the process environment itself): api_key, then api_base candidates.
_ENV_KEYS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "openai": (("OPENAI_API_KEY",), ("OPENAI_API_HOST", "OPENAI_API_BASE_URL", "OPENAI_BASE_URL")),
    "anthropic": (("ANTHROPIC_API_KEY",), ("ANTHROPIC_BASE_URL",)),
    "azure": (("AZURE_API_KEY", "AZURE_OPENAI_API_KEY"),
              ("AZURE_API_BASE_URL", "AZURE_OPENAI_API_BASE_URL", "AZURE_OPENAI_BASE_URL", "AZURE_API_HOST",
               "AZURE_OPENAI_API_HOST")),
    "gemini": (("GEMINI_API_KEY", "GOOGLE_API_KEY", "PALM_API_KEY"), ()),
    "mistral": (("MISTRAL_API_KEY",), ("MISTRAL_API_BASE_URL",)),
    "groq": (("GROQ_API_KEY",), ()),
    "openrouter": (("OPENROUTER_API_KEY",), ()),
    "together_ai": (("TOGETHER_API_KEY",), ()),
    "deepseek": (("DEEPSEEK_API_KEY",), ()),
    "fireworks_ai": (("FIREWORKS_API_KEY",), ()),
    "perplexity": (("PERPLEXITY_API_KEY",), ()),
    "cohere_chat": (("COHERE_API_KEY",), ()),
    "xai": (("XAI_API_KEY",), ()),
    "cerebras": (("CEREBRAS_API_KEY",), ()),
    "huggingface": (("HF_API_TOKEN", "HF_TOKEN"), ()),
    "replicate": (("REPLICATE_API_TOKEN", "REPLICATE_API_KEY"), ()),
    "ollama": ((), ("OLLAMA_BASE_URL",)),
    "litellm_proxy": (("LITELLM_API_KEY",), ("LITELLM_BASE_URL",)),
}


def env_params(provider_id: str, env: Mapping[str, str]) -> dict[str, Any]:
    """litellm kwargs from a provider's own `env:` (promptfoo's per-provider environment): its API key, base URL
    (a `*_API_HOST` becomes `https://HOST`, `/v1` added for OpenAI) and OpenAI organization."""
    if not env:
        return {}
    head = provider_id.partition(":")[0] if ":" in provider_id.partition("/")[0] else provider_id.partition("/")[0]
    target = _PREFIXES.get(head.lower(), head.lower())
    keys, bases = _ENV_KEYS.get("azure" if target.startswith("azure") else target, ((), ()))
    out: dict[str, Any] = {}
    key = next((env[k] for k in keys if env.get(k)), None)
    if key:
        out["api_key"] = key
    for name in bases:
        if env.get(name):
            base = env[name].rstrip("/")
            if name.endswith("_HOST"):
                base = "https://" + base.removeprefix("https://").removeprefix("http://")
                base += "/v1" if target == "openai" else ""
            out["api_base"] = base
            break
    if target == "openai" and env.get("OPENAI_ORGANIZATION"):
        out["organization"] = env["OPENAI_ORGANIZATION"]
    return out


#: promptfoo config key -> litellm kwarg. Keys already in litellm spelling pass through unchanged.
_KEY_MAP: dict[str, str] = {
    "apiBaseUrl": "api_base", "apiBase": "api_base", "baseUrl": "api_base", "base_url": "api_base",
    "apiKey": "api_key", "apiVersion": "api_version", "organization": "organization", "maxTokens": "max_tokens",
    "topP": "top_p", "topK": "top_k", "frequencyPenalty": "frequency_penalty", "presencePenalty": "presence_penalty",
    "responseFormat": "response_format", "stopSequences": "stop", "headers": "extra_headers",
    "passthrough": "extra_body", "toolChoice": "tool_choice",
}
#: promptfoo-only keys with no meaning for a litellm call (dropped instead of sent to the server).
_PROMPTFOO_ONLY = frozenset({
    "cost", "showThinking", "functionToolCallbacks", "transformResponse", "cache", "prefill",
    "apiKeyRequired",
})


def normalise_params(config: Mapping[str, Any] | None, *, env: Mapping[str, str] | None = None,
                     loc: Location | None = None, key: str = "config") -> dict[str, Any]:
    """litellm kwargs from a provider's `config:` (both spellings; unknown keys passed through): `apiKeyEnvar`
    read (a ConfigError when unset), `apiHost` as `https://HOST`, `timeoutMs` as `timeout` in seconds."""
    environ = os.environ if env is None else env
    out: dict[str, Any] = {}
    for name, value in (config or {}).items():
        if name in _PROMPTFOO_ONLY:
            continue
        if name == "apiKeyEnvar":
            var = str(value)
            secret = environ.get(var)
            if not secret:
                raise ConfigError.at(loc, f"apiKeyEnvar names {var!r}, which is not set", key=f"{key}.apiKeyEnvar",
                                     hint=f"export {var}=... before running, or set apiKey in the provider config")
            out.setdefault("api_key", secret)
            continue
        if name == "apiHost":
            host = str(value).rstrip("/")
            out.setdefault("api_base", host if "://" in host else f"https://{host}")
            continue
        if name == "timeoutMs":
            out["timeout"] = float(value) / 1000.0
            continue
        target = _KEY_MAP.get(name, name)
        if target == "api_key":
            out["api_key"] = value  # an explicit apiKey wins over apiKeyEnvar
        else:
            out[target] = value
    return out
