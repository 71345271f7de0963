"""Transport error messages: model, what happened, the server's words, a hint (through litellm, fake server)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

import evalrun.retry
from evalrun.errors import ProviderError
from evalrun.providers.litellm_ import LLMTransport
from tests.fakeserver import FakeOpenAI

MODEL = "openai/fake-model"


@pytest.fixture(scope="module")
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as s:
        yield s


def fail(server: FakeOpenAI, reply: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> tuple[str, int, int]:
    """(message, status or 0, requests made) of a call whose every reply is `reply` (2 attempts allowed)."""
    monkeypatch.setattr(evalrun.retry, "BASE_DELAY", 0.01)
    monkeypatch.setenv("EVALRUN_MAX_RETRIES", "2")
    server.reset()
    server.script(reply, reply)
    transport = LLMTransport(use_cache=False)
    with pytest.raises(ProviderError) as info:
        asyncio.run(transport.chat(MODEL, [{"role": "user", "content": "x"}], {"api_base": server.url,
                                                                              "api_key": "sk-test"}))
    assert info.value.retryable is False
    assert transport.stats()["errors"] == 1
    return str(info.value), info.value.status or 0, len(server.requests)


@pytest.mark.parametrize(("reply", "expected", "status", "requests"), [
    ({"status": 404, "body": {"object": "error", "message": "The model `x` does not exist.", "code": 404}},
     "openai/fake-model: HTTP 404 not found: The model `x` does not exist.\n  hint: check the model name", 404, 1),
    ({"status": 404, "body": {"detail": "Not Found"}}, "HTTP 404 not found: Not Found\n", 404, 1),
    ({"status": 400, "body": {"error": {"message": "maximum context length is 4096 tokens",
                                        "code": "context_length_exceeded"}}},
     "HTTP 400 bad request: maximum context length is 4096 tokens\n  hint: the prompt is longer", 400, 1),
    ({"status": 422, "raw": "Unprocessable"}, "openai/fake-model: HTTP 422 unprocessable request: Unprocessable",
     422, 1),
    ({"status": 429, "body": {"error": {"message": "Rate limit reached"}}},
     "HTTP 429 rate limited: Rate limit reached (gave up after 2 attempts)\n  hint: the provider is rate limiting",
     429, 2),
    ({"status": 502, "raw": "<html>bad gateway</html>"},
     "HTTP 502 bad gateway: <html>bad gateway</html> (gave up after 2 attempts)", 502, 2),
    ({"raw": '{"choices": []}'}, "openai/fake-model: the reply has no choices", 0, 1),
    ({"raw": "{}"}, "returned something that is not a chat completion", 0, 1),
])
def test_error_messages(server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch, reply: dict[str, Any],
                        expected: str, status: int, requests: int) -> None:
    message, got_status, made = fail(server, reply, monkeypatch)
    assert expected in message
    assert got_status == status
    assert made == requests
    assert "litellm." not in message and "OpenAIException" not in message


def test_failures_are_never_cached(server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVALRUN_MAX_RETRIES", "1")
    server.reset()
    server.script({"status": 400}, {"content": "fine now"})
    transport = LLMTransport()
    args: tuple[Any, ...] = (MODEL, [{"role": "user", "content": "y"}], {"api_base": server.url, "api_key": "k"})

    async def go() -> str:
        with pytest.raises(ProviderError):
            await transport.chat(*args)
        return (await transport.chat(*args)).text

    assert asyncio.run(go()) == "fine now"
    assert len(server.requests) == 2


@pytest.mark.parametrize(("model", "params", "expected", "hint", "attempts"), [
    ("fake-model-xyz", {"api_key": "k"}, "fake-model-xyz: litellm cannot tell which provider serves this model",
     "openai:gpt-4o-mini", 1),
    ("anthropic/claude-x", {"api_key": "k", "logit_bias": {"1": 1}},
     "anthropic/claude-x: a parameter this provider does not accept: anthropic does not support parameters",
     "drop_params", 1),
    ("ollama_chat/llama3", {"api_base": "http://127.0.0.1:9"},
     "ollama_chat/llama3: could not connect to http://127.0.0.1:9: Cannot connect to host 127.0.0.1:9 [Connect",
     "is the server running?", 2),
    ("anthropic/claude-x", {"api_key": "k", "api_base": "http://127.0.0.1:9"},
     "anthropic/claude-x: could not connect to http://127.0.0.1:9", "apiBaseUrl", 2),
])
def test_errors_raised_inside_litellm(monkeypatch: pytest.MonkeyPatch, model: str, params: dict[str, Any],
                                      expected: str, hint: str, attempts: int) -> None:
    monkeypatch.setattr(evalrun.retry, "BASE_DELAY", 0.01)
    monkeypatch.setenv("EVALRUN_MAX_RETRIES", "2")
    transport = LLMTransport(use_cache=False)
    with pytest.raises(ProviderError) as info:
        asyncio.run(transport.chat(model, [{"role": "user", "content": "x"}], params))
    message = str(info.value)
    assert message.startswith(expected)
    assert "\n  hint: " in message and hint in message.split("\n  hint: ")[1]
    assert "ssl:<" not in message and "Handle with" not in message
    assert transport.stats()["requests"] == attempts
