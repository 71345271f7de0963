"""Sane ranges for the numbers of a config that the schema cannot check alone.

The schema bounds every number (delay, repeat, maxConcurrency, timeoutMs, weight, threshold); here the
threshold of an assertion is checked against its type's score range: a faithfulness threshold of 7 could
never pass, so it is a ConfigError at the threshold's line, not an unpassable test. A provider's free-form
`config:` is checked here too: the numbers evalrun, litellm or the HTTP provider read (timeouts, retries,
delays, concurrency, sampling parameters) must be numbers in their range, at their own line.
"""

from __future__ import annotations

import math
from typing import Any

from evalrun.errors import ConfigError, Location

#: Largest assertion weight (the schema says the same): weights this size cannot overflow a weighted sum.
MAX_WEIGHT = 1_000_000

#: Types whose score is a fraction 0..1 (so is their threshold).
UNIT_SCORE_TYPES = frozenset({
    "bleu", "rouge-n", "llm-rubric", "faithfulness", "context-faithfulness", "context-precision",
    "context-recall", "hallucination", "noise-robustness", "noise-sensitivity",
})


def threshold_range(type_: str, config: dict[str, Any]) -> tuple[float, float] | None:
    """(low, high) a threshold of this assertion type may take, or None when its scale is open."""
    if type_ in UNIT_SCORE_TYPES:
        return 0.0, 1.0
    if type_ == "context-relevance":  # scored in `config.scale` units (default 1)
        scale = config.get("scale", 1)
        if isinstance(scale, (int, float)) and not isinstance(scale, bool) and math.isfinite(scale) and scale > 0:
            return 0.0, float(scale)
    return None


def check_threshold(type_: str, threshold: float | None, config: dict[str, Any], *, loc: Location | None,
                    key: str) -> None:
    """ConfigError at `loc` when the threshold is not finite or lies outside its type's score range."""
    if threshold is None:
        return
    if not math.isfinite(threshold):
        raise ConfigError.at(loc, f"threshold {threshold} is not a finite number", key=key)
    rng = threshold_range(type_, config)
    if rng is not None and not rng[0] <= threshold <= rng[1]:
        raise ConfigError.at(loc, f"threshold {threshold:g} is outside {type_}'s score range "
                                  f"{rng[0]:g}..{rng[1]:g}", key=key,
                             hint=f"{type_} scores lie between {rng[0]:g} and {rng[1]:g}; "
                                  "a threshold outside that range can never be met as intended")


#: Numbers a provider's `config` may hold, in promptfoo's and litellm's spellings: (lowest, highest, integer).
_TIMEOUT_S, _TIMEOUT_MS = (0.001, 86_400.0, False), (1.0, 86_400_000.0, False)
_RETRIES, _CONCURRENCY = (0.0, 100.0, True), (1.0, 10_000.0, True)
_DELAY_MS, _TOKENS, _PENALTY = (0.0, 3_600_000.0, False), (1.0, 10_000_000.0, True), (-2.0, 2.0, False)
PROVIDER_NUMBERS: dict[str, tuple[float, float, bool]] = {
    "timeout": _TIMEOUT_S, "timeoutMs": _TIMEOUT_MS, "timeout_ms": _TIMEOUT_MS, "request_timeout": _TIMEOUT_S,
    "max_retries": _RETRIES, "maxRetries": _RETRIES, "num_retries": _RETRIES, "retries": _RETRIES,
    "maxConcurrency": _CONCURRENCY, "max_concurrency": _CONCURRENCY,
    "delay": _DELAY_MS, "delayMs": _DELAY_MS, "retryDelay": _DELAY_MS, "retry_delay": _DELAY_MS,
    "temperature": (0.0, 2.0, False), "top_p": (0.0, 1.0, False), "topP": (0.0, 1.0, False),
    "max_tokens": _TOKENS, "maxTokens": _TOKENS, "max_completion_tokens": _TOKENS,
    "frequency_penalty": _PENALTY, "frequencyPenalty": _PENALTY, "presence_penalty": _PENALTY,
    "presencePenalty": _PENALTY, "n": (1.0, 128.0, True),
}


def check_provider_config(config: dict[str, Any], *, loc: Location | None, key: str,
                          loc_of: Any = None) -> None:
    """ConfigError at a key's own line (`loc_of(config, name)`, else `loc`) for a number of PROVIDER_NUMBERS
    that is not a number, not finite, not whole where it must be, or outside its range (provider config is not
    templated: a string here would fail at run time)."""
    for name, (low, high, whole) in PROVIDER_NUMBERS.items():
        if name not in config:
            continue
        value = config[name]
        if value is None:
            continue
        where = (loc_of(config, name) if loc_of else None) or loc
        what = "a whole number" if whole else "a number"
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError.at(where, f"{name} must be {what}, got {value!r}", key=f"{key}.{name}",
                                 hint=f"give {what} between {low:g} and {high:g}")
        if not math.isfinite(value) or not low <= value <= high or (whole and value != int(value)):
            raise ConfigError.at(where, f"{name} {value!r} is out of range: must be {what} between {low:g} and "
                                        f"{high:g}", key=f"{key}.{name}",
                                 hint=f"{name} is read as {_UNITS.get(name, 'a count')}")


_UNITS = {"timeout": "seconds", "request_timeout": "seconds", "timeoutMs": "milliseconds",
          "timeout_ms": "milliseconds", "delay": "milliseconds", "delayMs": "milliseconds",
          "retryDelay": "milliseconds", "retry_delay": "milliseconds", "temperature": "a sampling temperature",
          "top_p": "a probability", "topP": "a probability", "frequency_penalty": "a penalty",
          "frequencyPenalty": "a penalty", "presence_penalty": "a penalty", "presencePenalty": "a penalty",
          "max_tokens": "a token count", "maxTokens": "a token count", "max_completion_tokens": "a token count",
          "maxConcurrency": "concurrent requests", "max_concurrency": "concurrent requests"}
