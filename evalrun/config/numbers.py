"""Sane ranges for the numbers of a config that the schema cannot check alone.

The schema bounds every number (delay, repeat, maxConcurrency, timeoutMs, weight, threshold); here the
threshold of an assertion is checked against its type's score range: a faithfulness threshold of 7 could
never pass, so it is a ConfigError at the threshold's line, not an unpassable test.
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
