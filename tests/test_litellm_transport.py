"""LLMTransport end to end through litellm against the fake OpenAI-compatible server (no network)."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

import evalrun.retry
from evalrun.errors import ProviderError
from evalrun.providers.litellm_ import LLMTransport, load_litellm
from tests.fakeserver import FakeOpenAI

T = TypeVar("T")
MODEL = "openai/fake-model"
MSGS = [{"role": "user", "content": "hello"}]


@pytest.fixture(scope="module")
def _server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:  # one server per module: stopping one costs its 0.5 s poll interval
        yield server


@pytest.fixture
def fake_openai(_server: FakeOpenAI) -> Iterator[FakeOpenAI]:
    """The module's server, reset: empty script, no recorded requests, default replies."""
    _server.reset()
    default = _server.default
    yield _server
    _server.default = default
    _server.reset()


@pytest.fixture(autouse=True)
def _fast_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(evalrun.retry, "BASE_DELAY", 0.01)
    monkeypatch.delenv("EVALRUN_MAX_RETRIES", raising=False)


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


def params(server: FakeOpenAI, **extra: Any) -> dict[str, Any]:
    return {"api_base": server.url, "api_key": "sk-test", **extra}


def test_scripted_reply_becomes_output(fake_openai: FakeOpenAI) -> None:
    fake_openai.script({"content": "hi there", "usage": {"prompt_tokens": 7, "completion_tokens": 3,
                                                          "total_tokens": 10}, "finish_reason": "length"})
    out = run(LLMTransport().chat(MODEL, MSGS, params(fake_openai, temperature=0)))
    assert out.text == "hi there"
    assert (out.tokens.prompt, out.tokens.completion, out.tokens.total) == (7, 3, 10)
    assert out.finish_reason == "length"
    assert out.cached is False
    assert out.cost is None  # litellm knows no price for fake-model
    assert isinstance(out.raw, dict) and out.raw["choices"][0]["message"]["content"] == "hi there"
    body = fake_openai.requests[0]
    assert body["model"] == "fake-model" and body["messages"] == MSGS and body["temperature"] == 0


def test_injected_latency_is_measured(fake_openai: FakeOpenAI) -> None:
    fake_openai.script({"content": "slow", "delay": 0.3})
    out = run(LLMTransport().chat(MODEL, MSGS, params(fake_openai)))
    assert out.text == "slow"
    assert 300 <= out.latency_ms < 3000


def test_429_honours_retry_after_and_reports_the_retry(fake_openai: FakeOpenAI) -> None:
    events: list[str] = []
    transport = LLMTransport(on_event=events.append)

    async def go() -> tuple[float, str]:
        await transport.chat(MODEL, [{"role": "user", "content": "warm-up"}], params(fake_openai))  # import
        fake_openai.reset()
        fake_openai.script({"status": 429, "headers": {"Retry-After": "1"}}, {"content": "after wait"})
        start = time.perf_counter()
        out = await transport.chat(MODEL, MSGS, params(fake_openai))
        return time.perf_counter() - start, out.text

    elapsed, text = run(go())
    assert text == "after wait"
    assert len(fake_openai.requests) == 2
    assert elapsed >= 1.0
    assert events == [f"retry 2/5 after 429 (Retry-After 1s) [{MODEL}]"]
    assert transport.stats()["retries"] == 1


@pytest.mark.parametrize("failure", [{"status": 500}, {"status": 503}, {"drop": True}])
def test_transient_failure_then_success(fake_openai: FakeOpenAI, failure: dict[str, Any]) -> None:
    fake_openai.script(failure, {"content": "recovered"})
    events: list[str] = []
    transport = LLMTransport(on_event=events.append)
    out = run(transport.chat(MODEL, MSGS, params(fake_openai)))
    assert out.text == "recovered"
    assert len(fake_openai.requests) == 2
    assert len(events) == 1 and events[0].startswith("retry 2/5 after ")
    assert transport.stats() == {"calls": 1, "requests": 2, "cache_hits": 0, "coalesced": 0, "retries": 1,
                                 "errors": 0}


def test_400_is_not_retried(fake_openai: FakeOpenAI) -> None:
    fake_openai.script({"status": 400, "body": {"error": {"message": "unknown parameter: foo"}}})
    events: list[str] = []
    with pytest.raises(ProviderError) as info:
        run(LLMTransport(on_event=events.append).chat(MODEL, MSGS, params(fake_openai)))
    assert len(fake_openai.requests) == 1 and events == []
    err = info.value
    assert err.status == 400 and err.retryable is False
    assert str(err).startswith(f"{MODEL}: HTTP 400 bad request: ")
    assert "unknown parameter: foo" in str(err)


def test_401_names_the_key_to_check(fake_openai: FakeOpenAI) -> None:
    fake_openai.script({"status": 401})
    with pytest.raises(ProviderError) as info:
        run(LLMTransport().chat(MODEL, MSGS, params(fake_openai)))
    assert len(fake_openai.requests) == 1
    assert "HTTP 401" in str(info.value) and "OPENAI_API_KEY" in str(info.value)
    assert "apiKeyEnvar" in str(info.value)


def test_malformed_body_is_a_clear_error(fake_openai: FakeOpenAI) -> None:
    fake_openai.script({"raw": "<html>not an API</html>"})
    with pytest.raises(ProviderError) as info:
        run(LLMTransport().chat(MODEL, MSGS, params(fake_openai)))
    assert len(fake_openai.requests) == 1  # a wrong apiBaseUrl is not worth five attempts
    assert "did not return valid JSON" in str(info.value)
    assert "apiBaseUrl" in str(info.value)


def test_gives_up_after_bounded_attempts(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(*[{"status": 500}] * 10)
    transport = LLMTransport()
    with pytest.raises(ProviderError) as info:
        run(transport.chat(MODEL, MSGS, params(fake_openai)))
    assert len(fake_openai.requests) == 5
    assert info.value.status == 500 and info.value.retryable is False  # retries are used up
    assert "HTTP 500" in str(info.value) and "gave up after 5 attempts" in str(info.value)
    assert transport.stats()["errors"] == 1 and transport.stats()["retries"] == 4


def test_max_retries_env_bounds_attempts(fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVALRUN_MAX_RETRIES", "2")
    fake_openai.script(*[{"drop": True}] * 10)
    with pytest.raises(ProviderError) as info:
        run(LLMTransport().chat(MODEL, MSGS, params(fake_openai)))
    assert len(fake_openai.requests) == 2
    assert "could not connect" in str(info.value) and "gave up after 2 attempts" in str(info.value)


def test_timeout_is_retried_then_reported(fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVALRUN_MAX_RETRIES", "2")
    fake_openai.script({"content": "late", "delay": 1.0}, {"content": "late", "delay": 1.0})
    with pytest.raises(ProviderError) as info:
        run(LLMTransport().chat(MODEL, MSGS, params(fake_openai, timeout=0.2)))
    assert len(fake_openai.requests) == 2
    assert "timed out" in str(info.value)


def test_second_identical_call_is_served_from_cache(fake_openai: FakeOpenAI) -> None:
    fake_openai.script({"content": "first"}, {"content": "second"})
    transport = LLMTransport()

    async def go() -> tuple[Any, Any]:
        return (await transport.chat(MODEL, MSGS, params(fake_openai)),
                await transport.chat(MODEL, MSGS, params(fake_openai)))

    a, b = run(go())
    assert len(fake_openai.requests) == 1
    assert (a.text, a.cached, b.text, b.cached) == ("first", False, "first", True)
    assert b.tokens.cached == b.tokens.total == 15
    assert transport.stats()["cache_hits"] == 1
    # A new run (new transport) reads the same on-disk cache.
    c = run(LLMTransport().chat(MODEL, MSGS, params(fake_openai)))
    assert c.text == "first" and c.cached and len(fake_openai.requests) == 1


def test_different_params_miss_the_cache(fake_openai: FakeOpenAI) -> None:
    fake_openai.default = lambda body: {"content": f"t={body.get('temperature')}"}
    transport = LLMTransport()

    async def go() -> list[str]:
        return [(await transport.chat(MODEL, MSGS, params(fake_openai, temperature=t))).text for t in (0, 1)]

    assert run(go()) == ["t=0", "t=1"]
    assert len(fake_openai.requests) == 2


def test_api_key_is_not_part_of_the_cache_key(fake_openai: FakeOpenAI) -> None:
    transport = LLMTransport()

    async def go() -> None:
        await transport.chat(MODEL, MSGS, {"api_base": fake_openai.url, "api_key": "sk-alice"})
        out = await transport.chat(MODEL, MSGS, {"api_base": fake_openai.url, "api_key": "sk-bob"})
        assert out.cached

    run(go())
    assert len(fake_openai.requests) == 1


def test_no_cache_calls_every_time_and_creates_no_file(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    transport = LLMTransport(use_cache=False)

    async def go() -> None:
        await asyncio.gather(*[transport.chat(MODEL, MSGS, params(fake_openai)) for _ in range(2)])
        await transport.chat(MODEL, MSGS, params(fake_openai))

    run(go())
    assert len(fake_openai.requests) == 3
    assert not (tmp_path / "cache").exists()


def test_per_call_use_cache_false_bypasses_cache(fake_openai: FakeOpenAI) -> None:
    transport = LLMTransport()

    async def go() -> None:
        await transport.chat(MODEL, MSGS, params(fake_openai))
        out = await transport.chat(MODEL, MSGS, params(fake_openai), use_cache=False)
        assert not out.cached

    run(go())
    assert len(fake_openai.requests) == 2


def test_identical_in_flight_requests_are_coalesced(fake_openai: FakeOpenAI) -> None:
    fake_openai.default = lambda body: {"content": "shared", "delay": 0.3}
    transport = LLMTransport()

    async def go() -> list[Any]:
        return list(await asyncio.gather(*[transport.chat(MODEL, MSGS, params(fake_openai)) for _ in range(3)]))

    outs = run(go())
    assert len(fake_openai.requests) == 1
    assert [o.text for o in outs] == ["shared"] * 3
    assert sorted(o.cached for o in outs) == [False, True, True]
    assert transport.stats()["coalesced"] == 2


def test_cancelling_one_waiter_keeps_the_shared_request(fake_openai: FakeOpenAI) -> None:
    fake_openai.default = lambda body: {"content": "survivor", "delay": 0.3}
    transport = LLMTransport()

    async def go() -> str:
        first = asyncio.ensure_future(transport.chat(MODEL, MSGS, params(fake_openai)))
        second = asyncio.ensure_future(transport.chat(MODEL, MSGS, params(fake_openai)))
        await asyncio.sleep(0.1)
        first.cancel()
        return (await second).text

    assert run(go()) == "survivor"
    assert len(fake_openai.requests) == 1


def test_concurrency_bound_is_respected() -> None:
    lock = threading.Lock()
    state = {"now": 0, "max": 0}

    def slow(body: dict[str, Any]) -> dict[str, Any]:
        with lock:
            state["now"] += 1
            state["max"] = max(state["max"], state["now"])
        time.sleep(0.15)
        with lock:
            state["now"] -= 1
        return {"content": body["messages"][0]["content"]}

    with FakeOpenAI(default=slow) as server:
        transport = LLMTransport(max_concurrency=2, use_cache=False)

        async def go() -> list[str]:
            outs = await asyncio.gather(*[
                transport.chat(MODEL, [{"role": "user", "content": f"q{i}"}], params(server)) for i in range(8)])
            return [o.text for o in outs]

        assert run(go()) == [f"q{i}" for i in range(8)]
        assert len(server.requests) == 8
        assert state["max"] == 2
        state["max"] = 0
        assert run(go()) == [f"q{i}" for i in range(8)]  # the same transport in a second event loop
        assert len(server.requests) == 16
    assert state["max"] == 2


def test_response_format_json_schema_reaches_the_server(fake_openai: FakeOpenAI) -> None:
    fmt = {"type": "json_schema", "json_schema": {"name": "x", "strict": True, "schema": {
        "type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"],
        "additionalProperties": False}}}
    fake_openai.script({"content": {"a": 1}})
    out = run(LLMTransport().chat(MODEL, MSGS, params(fake_openai, response_format=fmt)))
    assert out.text == '{"a": 1}'
    assert fake_openai.requests[0]["response_format"]["type"] == "json_schema"
    assert fake_openai.requests[0]["response_format"]["json_schema"]["name"] == "x"


def test_aclose_then_a_new_run_still_works(fake_openai: FakeOpenAI) -> None:
    async def one_run(text: str) -> str:
        transport = LLMTransport()
        try:
            out = await transport.chat(MODEL, [{"role": "user", "content": text}], params(fake_openai))
            again = await transport.chat(MODEL, [{"role": "user", "content": text + "!"}], params(fake_openai))
            return out.text + again.text
        finally:
            await transport.aclose()

    fake_openai.default = lambda body: {"content": body["messages"][0]["content"]}
    assert run(one_run("a")) == "aa!"
    assert run(one_run("b")) == "bb!"
    assert len(fake_openai.requests) == 4


def test_cancelling_the_only_waiter_cancels_the_request(fake_openai: FakeOpenAI) -> None:
    transport = LLMTransport()

    async def go() -> str:
        await transport.chat(MODEL, [{"role": "user", "content": "warm-up"}], params(fake_openai))
        fake_openai.reset()
        fake_openai.script({"content": "too late", "delay": 0.5}, {"content": "fresh"})
        first = asyncio.ensure_future(transport.chat(MODEL, MSGS, params(fake_openai)))
        await asyncio.sleep(0.2)
        first.cancel()
        with pytest.raises(asyncio.CancelledError):
            await first
        return (await transport.chat(MODEL, MSGS, params(fake_openai))).text  # not joined to the cancelled one

    assert run(go()) == "fresh"
    assert len(fake_openai.requests) == 2


def test_cost_from_litellm_price_map_when_known(fake_openai: FakeOpenAI) -> None:
    fake_openai.script({"content": "x", "usage": {"prompt_tokens": 1000, "completion_tokens": 1000,
                                                  "total_tokens": 2000}})
    out = run(LLMTransport().chat("openai/gpt-4o-mini", MSGS, params(fake_openai)))
    assert out.cost is not None and 0 < out.cost < 0.01  # gpt-4o-mini: well under a cent for 2k tokens
    again = run(LLMTransport().chat("openai/gpt-4o-mini", MSGS, params(fake_openai)))
    assert again.cached and again.cost == 0.0


def test_cost_is_the_one_litellm_computed_not_priced_again(fake_openai: FakeOpenAI,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    litellm = load_litellm()

    def price_again(*args: Any, **kwargs: Any) -> float:
        raise AssertionError("completion_cost called: litellm already priced this response")

    monkeypatch.setattr(litellm, "completion_cost", price_again)
    fake_openai.script({"content": "x", "usage": {"prompt_tokens": 1000, "completion_tokens": 1000,
                                                  "total_tokens": 2000}})
    out = run(LLMTransport().chat("openai/gpt-4o-mini", MSGS, params(fake_openai), use_cache=False))
    assert out.cost is not None and 0 < out.cost < 0.01
    unpriced = run(LLMTransport().chat(MODEL, MSGS, params(fake_openai), use_cache=False))
    assert unpriced.cost is None


def test_tool_call_reply_becomes_its_json(fake_openai: FakeOpenAI) -> None:
    call = {"id": "call_1", "type": "function", "function": {"name": "lookup", "arguments": "{\"q\": \"x\"}"}}
    completion = {"id": "c", "object": "chat.completion", "created": 0, "model": "fake-model",
                  "choices": [{"index": 0, "finish_reason": "tool_calls",
                               "message": {"role": "assistant", "content": None, "tool_calls": [call]}}],
                  "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}
    fake_openai.script({"raw": json.dumps(completion)})
    out = run(LLMTransport().chat(MODEL, MSGS, params(fake_openai)))
    assert out.finish_reason == "tool_calls"
    assert json.loads(out.text)[0]["function"] == {"name": "lookup", "arguments": "{\"q\": \"x\"}"}
