"""The retry policy for model and HTTP calls: EVALRUN_MAX_RETRIES attempts (default 5), tenacity's exponential
back-off with jitter, Retry-After honoured; only `ProviderError`s marked retryable are retried.
"""

from __future__ import annotations

import email.utils
import os
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception,
    stop_after_attempt,
    wait_exponential_jitter,
)

from evalrun.errors import ConfigError, ProviderError

T = TypeVar("T")

#: Total attempts per request (the first call included) unless EVALRUN_MAX_RETRIES says otherwise.
DEFAULT_ATTEMPTS = 5
#: First back-off in seconds; doubles on each retry, plus up to as much again of jitter (tests patch this small).
BASE_DELAY = 0.5
#: Longest exponential back-off.
MAX_DELAY = 30.0
#: Longest Retry-After we honour; a server asking for more is waited on for this long.
MAX_RETRY_AFTER = 120.0

#: Statuses worth another attempt. Every other 4xx is the caller's mistake and fails at once.
RETRY_STATUSES = frozenset({408, 409, 425, 429})

OnRetry = Callable[[int, int, ProviderError, float], None]


def is_retryable_status(status: int | None) -> bool:
    """True for 408/409/425/429 and every 5xx."""
    return status is not None and (status in RETRY_STATUSES or 500 <= status <= 599)


def parse_retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or an HTTP date); None when absent or bad."""
    text = "" if value is None else str(value).strip()
    if not text:
        return None
    try:
        seconds = float(text)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError):
            return None
        if when is None:
            return None
        seconds = when.timestamp() - (time.time() if now is None else now)
    if seconds != seconds:  # NaN
        return None
    return min(max(seconds, 0.0), MAX_RETRY_AFTER)


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to retry. `attempts` counts the first call; 1 disables retries."""

    attempts: int = DEFAULT_ATTEMPTS
    base_delay: float | None = None  # None = the module's BASE_DELAY at call time
    max_delay: float = MAX_DELAY

    @classmethod
    def from_env(cls) -> RetryPolicy:
        """The policy with EVALRUN_MAX_RETRIES (total attempts, >= 1) applied when set."""
        raw = os.environ.get("EVALRUN_MAX_RETRIES", "").strip()
        if not raw:
            return cls()
        attempts = int(raw) if raw.isascii() and raw.lstrip("+-").isdigit() else 0  # not "²"
        if attempts < 1:
            raise ConfigError(f"EVALRUN_MAX_RETRIES={raw!r} is not a whole number >= 1", key="EVALRUN_MAX_RETRIES",
                              hint="it is the total number of attempts per request, e.g. 5; 1 disables retries")
        return cls(attempts=attempts)

    def wait(self) -> Callable[[RetryCallState], float]:
        """tenacity's wait for this policy: the server's Retry-After when the error carries one (at most
        MAX_RETRY_AFTER), else `wait_exponential_jitter`: base * 2**(n-1) + uniform(0, base), at most max_delay."""
        base = BASE_DELAY if self.base_delay is None else self.base_delay
        exponential = wait_exponential_jitter(multiplier=base, max=self.max_delay, jitter=base)

        def wait(state: RetryCallState) -> float:
            exc = state.outcome.exception() if state.outcome else None
            if isinstance(exc, ProviderError) and exc.retry_after is not None:
                return min(max(exc.retry_after, 0.0), MAX_RETRY_AFTER)
            return exponential(state)

        return wait


def describe_retry(attempt: int, total: int, error: ProviderError, wait: float) -> str:
    """The progress line for a retry, e.g. ``retry 2/5 after 429 (Retry-After 1s)``."""
    text = str(error).lower()
    if error.status:
        cause = str(error.status)
    elif "timed out" in text or "timeout" in text:
        cause = "timeout"
    else:
        cause = "connection error" if "connect" in text else "error"
    seconds = f"{wait:g}s" if wait == int(wait) else f"{wait:.2f}s"
    return f"retry {attempt}/{total} after {cause} ({'back-off' if error.retry_after is None else 'Retry-After'} {seconds})"


async def call_with_retries(fn: Callable[[], Awaitable[T]], policy: RetryPolicy,
                            on_retry: OnRetry | None = None) -> T:
    """Await `fn()` until it succeeds, raises a non-retryable error, or `policy.attempts` are used up (the last
    error re-raised as it is); `on_retry(next_attempt, total, error, wait_seconds)` before each back-off."""
    def before_sleep(state: RetryCallState) -> None:
        exc = state.outcome.exception() if state.outcome else None
        if on_retry is not None and isinstance(exc, ProviderError):
            seconds = state.next_action.sleep if state.next_action else 0.0
            on_retry(state.attempt_number + 1, policy.attempts, exc, seconds)

    retrying = AsyncRetrying(
        stop=stop_after_attempt(max(policy.attempts, 1)),
        wait=policy.wait(),
        retry=retry_if_exception(lambda e: isinstance(e, ProviderError) and e.retryable),
        before_sleep=before_sleep,
        reraise=True,
    )
    return await retrying(fn)
