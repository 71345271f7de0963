"""The direct OpenAI-compatible transport sends what litellm sends and yields what litellm yields (fake server)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

import evalrun.retry
from evalrun.errors import ProviderError
from evalrun.providers import litellm_
from evalrun.providers.http_ import DirectOpenAI
from evalrun.providers.litellm_ import LLMTransport
from tests.fakeserver import FakeOpenAI

MODEL = "openai/fake-model"
SCHEMA = {"type": "json_schema", "json_schema": {"name": "v", "strict": True, "schema": {
    "type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}}}
TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}}]


@pytest.fixture(scope="module")
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as s:
        yield s


def _call(server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch, path: str, messages: list[dict[str, Any]],
          params: dict[str, Any], reply: dict[str, Any]) -> tuple[dict[str, Any], Any]:
    """(request body the server got, Output or ProviderError text) through `path` (direct | litellm)."""
    monkeypatch.setenv("EVALRUN_LLM_TRANSPORT", path)
    monkeypatch.setattr(evalrun.retry, "BASE_DELAY", 0.01)
    monkeypatch.setenv("EVALRUN_MAX_RETRIES", "1")
    server.reset()
    server.script(reply)
    transport = LLMTransport(use_cache=False)
    used_litellm = litellm_._litellm is not None

    async def go() -> Any:
        try:
            return await transport.chat(MODEL, messages, {"api_base": server.url, **params})
        except ProviderError as e:
            return f"ERROR {e} status={e.status}"
        finally:
            await transport.aclose()

    result = asyncio.run(go())
    if path == "direct" and not used_litellm:
        assert litellm_._litellm is None  # the direct path never imports litellm
    assert len(server.requests) == 1
    return server.requests[0], result


def _shape(error: str) -> tuple[list[str], list[str]]:
    """An error text reduced to what evalrun decides: the model, the kind of failure (with the HTTP status when
    there is one), the hint and the status. The detail after "model: kind: " is upstream wording (litellm's
    own message, which changes between releases: 1.110 dropped the server's body from its 404) and is left out."""
    first, *rest = error.split("\n")
    return first.split(": ")[:2], rest


CASES: list[tuple[list[dict[str, Any]], dict[str, Any], dict[str, Any]]] = [
    ([{"role": "user", "content": "hi"}], {"api_key": "sk-test"}, {"content": "hello"}),
    ([{"role": "system", "content": "be brief"}, {"role": "user", "content": "héllo 🙂"}],
     {"api_key": "sk-test", "temperature": 0, "max_tokens": 12, "top_p": 0.5, "stop": ["\n"], "seed": 7},
     {"content": "x", "finish_reason": "length", "usage": {"prompt_tokens": 5, "completion_tokens": 1,
                                                            "total_tokens": 6}}),
    ([{"role": "user", "content": "grade"}], {"api_key": "sk-test", "response_format": SCHEMA, "temperature": 0},
     {"content": '{"ok": true}'}),
    ([{"role": "user", "content": "x"}], {"api_key": "sk-test"}, {"status": 429, "body": {"error": {
        "message": "slow down"}}}),
    ([{"role": "user", "content": "x"}], {"api_key": "sk-test"}, {"status": 404, "body": {"detail": "Not Found"}}),
    ([{"role": "user", "content": "x"}], {"api_key": "sk-test"}, {"raw": "not json"}),
    ([{"role": "user", "content": "x"}], {"api_key": "sk-test"}, {"raw": "{}"}),
]


@pytest.mark.parametrize(("messages", "params", "reply"), CASES)
def test_same_request_and_same_result_as_litellm(server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch,
                                                 messages: list[dict[str, Any]], params: dict[str, Any],
                                                 reply: dict[str, Any]) -> None:
    sent_l, out_l = _call(server, monkeypatch, "litellm", messages, params, reply)
    sent_d, out_d = _call(server, monkeypatch, "direct", messages, params, reply)
    assert sent_d == sent_l
    if isinstance(out_l, str):
        assert _shape(out_d) == _shape(out_l)
        if "status" in reply:  # the direct path words its own errors: it passes the server's message on
            body = reply["body"]
            message = body["error"]["message"] if "error" in body else body["detail"]
            assert out_d.split("\n")[0].endswith(f": {message}"), out_d
        return
    assert (out_d.text, out_d.tokens, out_d.finish_reason, out_d.cost, out_d.cached) == \
        (out_l.text, out_l.tokens, out_l.finish_reason, out_l.cost, out_l.cached)
    assert out_d.raw["choices"][0]["message"]["content"] == out_l.raw["choices"][0]["message"]["content"]


def test_which_calls_take_the_direct_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EVALRUN_LLM_TRANSPORT", raising=False)
    base = {"api_base": "http://127.0.0.1:1/v1", "timeout": 10, "temperature": 0}
    assert DirectOpenAI.accepts("openai/my-local-llama", base)
    assert not DirectOpenAI.accepts("openai/gpt-4o-mini", base)  # litellm prices it: litellm serves it
    assert not DirectOpenAI.accepts("openai/my-local-llama", {**base, "drop_params": True})  # litellm-only option
    assert not DirectOpenAI.accepts("openai/my-local-llama", {**base, "tools": TOOLS})  # litellm transforms tools
    assert not DirectOpenAI.accepts("openai/my-local-llama", {"temperature": 0})  # no api_base: hosted OpenAI
    assert not DirectOpenAI.accepts("anthropic/claude-3-5-haiku", base)
    monkeypatch.setenv("EVALRUN_LLM_TRANSPORT", "litellm")
    assert not DirectOpenAI.accepts("openai/my-local-llama", base)


def test_connection_refused_is_retryable_then_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setattr(evalrun.retry, "BASE_DELAY", 0.01)
    monkeypatch.setenv("EVALRUN_MAX_RETRIES", "2")
    transport = LLMTransport(use_cache=False)
    with pytest.raises(ProviderError) as e:
        asyncio.run(transport.chat(MODEL, [{"role": "user", "content": "x"}],
                                   {"api_base": f"http://127.0.0.1:{port}/v1", "api_key": "k"}))
    assert "could not connect to" in str(e.value) and "gave up after 2 attempts" in str(e.value)
    assert transport.stats()["requests"] == 2
