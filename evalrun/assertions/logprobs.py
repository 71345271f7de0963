"""Assertions on the log-probabilities of the output's tokens, as the provider returned them: promptfoo's
perplexity and perplexity-score. A provider that returns none makes them an ERROR."""

from __future__ import annotations

import math
from typing import Any

from evalrun.assertions.base import Assertion, AssertionContext, Score
from evalrun.assertions.registry import register
from evalrun.errors import AssertionRuntimeError

NO_LOGPROBS = ("{type} needs the log-probabilities of the output's tokens and the provider {provider} returned "
               "none; for an OpenAI-compatible model set `config: {{logprobs: true}}` on the provider, for a "
               "script provider return `logProbs: [...]` with the output")


def token_logprobs(raw: Any) -> list[float] | None:
    """The tokens' log-probabilities in a provider reply: promptfoo's `logProbs` (a script provider's reply) or
    an OpenAI chat completion's `choices[0].logprobs.content[].logprob`; None when there are none."""
    if not isinstance(raw, dict):
        return None
    given = raw.get("logProbs")
    if given is None:
        choices = raw.get("choices")
        first = choices[0] if isinstance(choices, list) and choices and isinstance(choices[0], dict) else {}
        content = (first.get("logprobs") or {}).get("content") if isinstance(first.get("logprobs"), dict) else None
        given = [t.get("logprob") for t in content if isinstance(t, dict)] if isinstance(content, list) else None
    if not isinstance(given, list) or not given:
        return None
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in given):
        raise AssertionRuntimeError(f"the provider's logProbs are not all numbers: {given[:5]!r}")
    return [float(v) for v in given]


def mean_logprob(ctx: AssertionContext, type_name: str) -> float:
    """The mean log-probability of the output's tokens, or an ERROR naming why there is none."""
    values = token_logprobs(ctx.response.raw)
    if values is None:
        raise AssertionRuntimeError(NO_LOGPROBS.format(type=type_name, provider=ctx.case.provider.id))
    return sum(values) / len(values)


class _Perplexity(Assertion):
    takes_value = False
    config_keys = frozenset()

    def check(self) -> None:
        if self.spec.negate and self.spec.threshold is None:  # promptfoo passes it whatever the output
            raise self.error(f"{self.spec.full_type} needs a threshold", key="threshold",
                             hint="without one the assertion only reports and always passes")


@register("perplexity")
class Perplexity(_Perplexity):
    """Perplexity of the output, exp(-mean token log-probability), is at most `threshold`.

    YAML keys: `threshold` (optional: without it the assertion always passes and only reports). Score 1 when it
    passes, else 0 (as in promptfoo). Needs the provider's log-probabilities (OpenAI-compatible models with
    `config: {logprobs: true}`, or a script provider's `logProbs`); without them an ERROR.
    """

    async def evaluate(self, ctx: AssertionContext) -> Score:
        perplexity = math.exp(-mean_logprob(ctx, self.spec.type))
        threshold = self.spec.threshold
        if threshold is None:
            return Score(True, 1.0, f"Perplexity {perplexity:.2f} (no threshold)", {"perplexity": perplexity},
                         keep_score_on_negate=True)
        passed = perplexity <= threshold
        reason = f"Perplexity {perplexity:.2f} is {'<=' if passed else 'greater than'} threshold {threshold:g}"
        return Score(passed, 1.0 if passed else 0.0, reason, {"perplexity": perplexity})


@register("perplexity-score")
class PerplexityScore(_Perplexity):
    """promptfoo's normalised perplexity score, 1 / (1 + exp(-mean token log-probability)), is >= `threshold`.

    YAML keys: `threshold` (optional: without it the assertion always passes). Score = that value (`not-`
    reports 1 - score). Needs the provider's log-probabilities, as for `perplexity`; without them an ERROR.
    """

    async def evaluate(self, ctx: AssertionContext) -> Score:
        value = 1.0 / (1.0 + math.exp(-mean_logprob(ctx, self.spec.type)))
        threshold = self.spec.threshold
        if threshold is None:
            return Score(True, value, f"Perplexity score {value:.2f} (no threshold)")
        passed = value >= threshold
        return Score(passed, value, f"Perplexity score {value:.2f} is {'>=' if passed else 'less than'} threshold "
                                    f"{threshold:g}")
