"""The retry policy: which errors retry, how long to wait, how often (pure, no litellm)."""

from __future__ import annotations

import asyncio
import email.utils
import time

import pytest
from tenacity import RetryCallState

import evalrun.retry as retry
from evalrun.errors import ConfigError, ProviderError
from evalrun.retry import (
    RetryPolicy,
    call_with_retries,
    describe_retry,
    is_retryable_status,
    parse_retry_after,
)


@pytest.mark.parametrize(("status", "expected"), [
    (429, True), (408, True), (500, True), (502, True), (503, True), (504, True), (599, True),
    (400, False), (401, False), (403, False), (404, False), (422, False), (200, False), (None, False),
])
def test_retryable_statuses(status: int | None, expected: bool) -> None:
    assert is_retryable_status(status) is expected


def test_parse_retry_after() -> None:
    assert parse_retry_after("1") == 1.0
    assert parse_retry_after(" 2.5 ") == 2.5
    assert parse_retry_after("-3") == 0.0
    assert parse_retry_after("100000") == retry.MAX_RETRY_AFTER
    assert parse_retry_after(None) is None
    assert parse_retry_after("") is None
    assert parse_retry_after("soon") is None
    now = time.time()
    date = email.utils.formatdate(now + 30, usegmt=True)
    assert parse_retry_after(date, now=now) == pytest.approx(30, abs=1.5)


def _waits(policy: RetryPolicy, retry_number: int, error: ProviderError | None = None, n: int = 50) -> list[float]:
    """What `policy.wait()` gives before retry `retry_number` (1 = the first retry) after `error`."""
    wait = policy.wait()
    out = []
    for _ in range(n):
        state = RetryCallState(None, None, (), {})
        state.attempt_number = retry_number
        if error is not None:
            state.set_exception((type(error), error, None))
        out.append(wait(state))
    return out


def test_backoff_grows_with_jitter_and_is_capped() -> None:
    policy = RetryPolicy(base_delay=1.0, max_delay=5.0)
    for n, low, high in [(1, 1.0, 2.0), (2, 2.0, 3.0), (3, 4.0, 5.0), (4, 5.0, 5.0), (9, 5.0, 5.0)]:
        waits = _waits(policy, n)
        assert all(low <= w <= high for w in waits), (n, waits)
        assert n >= 4 or len(set(waits)) > 1  # jittered below the cap
    assert max(_waits(RetryPolicy(base_delay=0.01), 1, ProviderError("x", retryable=True, status=500))) <= 0.02


def test_backoff_prefers_retry_after() -> None:
    err = ProviderError("x", retryable=True, status=429, retry_after=3.0)
    assert _waits(RetryPolicy(base_delay=0.01), 1, err) == [3.0] * 50
    huge = ProviderError("x", retryable=True, status=429, retry_after=10_000.0)
    assert _waits(RetryPolicy(), 1, huge, n=1) == [retry.MAX_RETRY_AFTER]


def test_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EVALRUN_MAX_RETRIES", raising=False)
    assert RetryPolicy.from_env().attempts == 5
    monkeypatch.setenv("EVALRUN_MAX_RETRIES", "3")
    assert RetryPolicy.from_env().attempts == 3
    for bad in ("0", "-1", "many"):
        monkeypatch.setenv("EVALRUN_MAX_RETRIES", bad)
        with pytest.raises(ConfigError) as info:
            RetryPolicy.from_env()
        assert info.value.key == "EVALRUN_MAX_RETRIES" and info.value.hint


def test_describe_retry() -> None:
    assert describe_retry(2, 5, ProviderError("m", status=429, retry_after=1.0), 1.0) == \
        "retry 2/5 after 429 (Retry-After 1s)"
    assert describe_retry(3, 5, ProviderError("m: HTTP 500", status=500), 0.25) == \
        "retry 3/5 after 500 (back-off 0.25s)"
    assert describe_retry(2, 4, ProviderError("m: could not connect to x"), 1.0) == \
        "retry 2/4 after connection error (back-off 1s)"
    assert describe_retry(2, 4, ProviderError("m: timed out"), 1.0).startswith("retry 2/4 after timeout")


class Flaky:
    """Fails with the given errors in turn, then returns 'ok'."""

    def __init__(self, *errors: ProviderError) -> None:
        self.errors = list(errors)
        self.calls = 0

    async def __call__(self) -> str:
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return "ok"


def test_retries_retryable_errors_then_succeeds() -> None:
    fn = Flaky(ProviderError("a", retryable=True, status=500), ProviderError("b", retryable=True, status=429))
    seen: list[tuple[int, int, int | None]] = []
    result = asyncio.run(call_with_retries(fn, RetryPolicy(base_delay=0.001),
                                           lambda n, total, err, wait: seen.append((n, total, err.status))))
    assert result == "ok" and fn.calls == 3
    assert seen == [(2, 5, 500), (3, 5, 429)]


def test_non_retryable_error_fails_at_once() -> None:
    fn = Flaky(ProviderError("bad request", retryable=False, status=400))
    with pytest.raises(ProviderError, match="bad request"):
        asyncio.run(call_with_retries(fn, RetryPolicy(base_delay=0.001)))
    assert fn.calls == 1


def test_other_exceptions_are_not_retried() -> None:
    calls = 0

    async def boom() -> None:
        nonlocal calls
        calls += 1
        raise KeyError("bug")

    with pytest.raises(KeyError):
        asyncio.run(call_with_retries(boom, RetryPolicy(base_delay=0.001)))
    assert calls == 1


def test_attempts_are_bounded_and_last_error_reraised() -> None:
    fn = Flaky(*[ProviderError(f"e{i}", retryable=True, status=503) for i in range(10)])
    with pytest.raises(ProviderError, match="e2"):
        asyncio.run(call_with_retries(fn, RetryPolicy(attempts=3, base_delay=0.001)))
    assert fn.calls == 3


def test_module_base_delay_is_used_when_policy_has_none(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(retry, "BASE_DELAY", 0.2)
    fn = Flaky(ProviderError("a", retryable=True, status=500))
    start = time.perf_counter()
    asyncio.run(call_with_retries(fn, RetryPolicy()))
    assert 0.1 <= time.perf_counter() - start < 1.0
