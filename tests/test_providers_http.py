"""http(s):// provider against the fake server: body templates, response paths, retries and their limits."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from evalrun import retry
from evalrun.errors import ConfigError, ProviderError
from evalrun.providers.base import CallContext
from evalrun.providers.http_ import HttpProvider, parse_path
from evalrun.types import ProviderSpec
from tests.fakeserver import FakeOpenAI

CTX = CallContext(vars={"user": "ann"}, prompt_label="p")
PATH = "json.choices[0].message.content"


@pytest.fixture(autouse=True)
def _fast_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(retry, "BASE_DELAY", 0.01)


def _provider(fake: FakeOpenAI, events: list[str] | None = None, **config: Any) -> HttpProvider:
    cfg = {"url": fake.url + "/chat/completions", "responsePath": PATH, **config}
    return HttpProvider(ProviderSpec("https://example.invalid/api", config=cfg), on_event=(
        events.append if events is not None else None))


async def _call(p: HttpProvider, prompt: str) -> Any:
    try:
        return await p.call(prompt, CTX)
    finally:
        await p.aclose()


def test_body_template_and_response_path(fake_openai: FakeOpenAI) -> None:
    fake_openai.script({"content": "the answer"})
    p = _provider(fake_openai, body={"q": "{{ prompt }}", "who": "{{ user }}", "n": 3},
                  headers={"X-User": "{{ user }}"})
    out = asyncio.run(_call(p, "what?"))
    assert out.text == "the answer" and out.latency_ms > 0
    assert fake_openai.requests[0] == {"q": "what?", "who": "ann", "n": 3}


def test_429_with_retry_after_is_retried_and_reported(fake_openai: FakeOpenAI) -> None:
    fake_openai.script({"status": 429, "headers": {"Retry-After": "0.3"}}, {"content": "ok"})
    events: list[str] = []
    start = time.perf_counter()
    out = asyncio.run(_call(_provider(fake_openai, events), "x"))
    assert out.text == "ok" and time.perf_counter() - start >= 0.3
    assert len(events) == 1 and "429" in events[0] and "Retry-After" in events[0]


def test_5xx_and_dropped_connections_are_retried(fake_openai: FakeOpenAI) -> None:
    fake_openai.script({"status": 500}, {"drop": True}, {"content": "finally"})
    assert asyncio.run(_call(_provider(fake_openai), "x")).text == "finally"
    assert len(fake_openai.requests) == 3


def test_other_4xx_fail_at_once(fake_openai: FakeOpenAI) -> None:
    fake_openai.script({"status": 400}, {"content": "never"})
    with pytest.raises(ProviderError, match="http 400") as e:
        asyncio.run(_call(_provider(fake_openai), "x"))
    assert e.value.status == 400 and len(fake_openai.requests) == 1


def test_retries_are_bounded(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(*[{"status": 503}] * 10)
    with pytest.raises(ProviderError, match="503"):
        asyncio.run(_call(_provider(fake_openai, maxRetries=2), "x"))
    assert len(fake_openai.requests) == 3


def test_malformed_body_with_a_path_is_an_error(fake_openai: FakeOpenAI) -> None:
    fake_openai.script({"raw": "not json"})
    with pytest.raises(ProviderError, match="not JSON"):
        asyncio.run(_call(_provider(fake_openai), "x"))


def test_missing_path_is_an_error_naming_it(fake_openai: FakeOpenAI) -> None:
    with pytest.raises(ProviderError, match="'answer'"):
        asyncio.run(_call(_provider(fake_openai, responsePath="json.answer"), "x"))


def test_config_checks() -> None:
    with pytest.raises(ConfigError, match="unknown http provider config key 'respnsePath'") as e:
        HttpProvider(ProviderSpec("http://x", config={"respnsePath": "a"}))
    assert "responsePath" in str(e.value)
    assert parse_path("json.a[2]['b c'].d") == ["a", 2, "b c", "d"]
    with pytest.raises(ConfigError):
        HttpProvider(ProviderSpec("http://x", config={"responsePath": "a..b"}))
