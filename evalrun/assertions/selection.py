"""max-score: select-best's deterministic sibling. The outputs of a test's providers and prompts are compared by
the scores their other assertions gave (promptfoo's selectMaxScore); no grader call."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from evalrun.assertions.base import Assertion, AssertionContext, Score
from evalrun.assertions.model_graded import CURRENT
from evalrun.assertions.registry import register
from evalrun.errors import AssertionRuntimeError

#: Results of these types are not aggregated (promptfoo compares the type as written).
_SKIPPED = ("max-score", "select-best")


def aggregate(results: Sequence[Any], weights: Mapping[str, float], method: str) -> tuple[float, int, float]:
    """(aggregate score, results counted, their total weight) over a case's other results: each result's score
    (an ERROR or no score counts 0) times `weights[its type]` (default 1); the weighted mean, or with
    method `sum` the weighted sum. Raises when there is no other result to aggregate."""
    relevant = [r for r in results if r.type not in _SKIPPED]
    if not relevant:
        raise AssertionRuntimeError("max-score requires at least one other assertion (besides max-score or "
                                    "select-best) to aggregate scores from")
    total = weight = 0.0
    for r in relevant:
        w = float(weights.get(r.type, 1))
        total += (r.score or 0.0) * w
        weight += w
    score = total if method == "sum" else (total / weight if weight > 0 else 0.0)
    return score, len(relevant), weight


def winner(scores: Sequence[float], threshold: float | None) -> int | None:
    """The index of the highest score (the first on a tie), None when it is below `threshold`."""
    best = max(range(len(scores)), key=lambda i: (scores[i], -i))
    return best if threshold is None or scores[best] >= threshold else None


@register("max-score")
class MaxScore(Assertion):
    """Of a test's outputs across providers and prompts, the one whose other assertions scored highest passes.

    Each output's aggregate is the weighted mean (or sum) of its other assertions' scores (an ERROR counts 0;
    max-score and select-best are left out); the first highest wins, the others fail. The result carries no
    score of its own: the winner's case score is its other assertions' (as in promptfoo). Needs at least 2
    outputs and one other assertion; no grader call. YAML keys: `value` (optional): `{method: average | sum
    (default average), weights: {ASSERTION_TYPE: number} (default 1 each), threshold: number (optional: the
    winning aggregate must reach it, else no output passes)}`.
    """

    compares_outputs = True
    after_siblings = True
    config_keys = frozenset()
    value_hint = "e.g. `value: {method: average, weights: {contains: 2}, threshold: 0.5}`"

    def parse(self, value: Any) -> dict[str, Any]:
        if value is None:
            return {"method": "average", "weights": {}, "threshold": None}
        if not isinstance(value, dict):
            raise ValueError(f"the value must be a mapping of method, weights and threshold, got {value!r}")
        unknown = sorted(set(value) - {"method", "weights", "threshold"})
        if unknown:
            raise ValueError(f"max-score's value has unknown key(s) {', '.join(unknown)} (allowed: method, weights, "
                             "threshold)")
        method = value.get("method", "average")
        if method not in ("average", "sum"):
            raise ValueError(f"max-score's method must be average or sum, got {method!r}")
        weights = value.get("weights") or {}
        if not isinstance(weights, dict) or not all(_number(w) and w >= 0 for w in weights.values()):
            raise ValueError(f"max-score's weights must map assertion types to non-negative numbers, got {weights!r}")
        threshold = value.get("threshold")
        if threshold is not None and not _number(threshold):
            raise ValueError(f"max-score's threshold must be a number, got {threshold!r}")
        return {"method": method, "weights": weights, "threshold": threshold}

    async def evaluate(self, ctx: AssertionContext) -> Score:
        opts = self.value_of(ctx)
        group = CURRENT.get()
        if group is None:
            raise AssertionRuntimeError("max-score compares the outputs of a test's providers and prompts: it runs "
                                        "in `evalrun eval`, not on a single output")
        mine, count, weight = aggregate(ctx.siblings, opts["weights"], opts["method"])

        async def compare(entries: list[tuple[str, Any]]) -> tuple[int | None, list[float], list[str]]:
            if len(entries) < 2:
                raise AssertionRuntimeError(f"max-score needs at least 2 outputs to compare, got {len(entries)}")
            scores = [float(s) for _, s in entries]
            return winner(scores, opts["threshold"]), scores, [cid for cid, _ in entries]
        (best, scores, ids), _ = await group.submit(self.spec.key_path or "max-score", ctx.case.id, mine, compare)
        me = ids.index(ctx.case.id)
        top = max(scores)
        if best == me:
            reason = f"Selected as highest scoring output (score: {mine:.3f})"
        elif best is None and mine == top:
            reason = f"Not selected - score {mine:.3f} below threshold {opts['threshold']}"
        else:
            reason = f"Not selected (score: {mine:.3f}, max: {top:.3f})"
        return Score(best == me, None, reason, {"maxScore": mine, "assertionCount": count, "totalWeight": weight,
                                                "chosen": best, "position": me})


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
