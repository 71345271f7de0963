"""Mastra's deterministic scorers (completeness, content-similarity, keyword-coverage, textual-difference,
tone-consistency): the output against `value`, else Mastra's input; formulas in grading/scoring/deterministic.py."""

from __future__ import annotations

from typing import Any, ClassVar

from evalrun.assertions.base import Assertion, AssertionContext, Score, against
from evalrun.assertions.graded import mastra_input
from evalrun.assertions.registry import register
from evalrun.grading.scoring import deterministic as text_scoring


class ScaledScorer(Assertion):
    """Shared base: `config.scale`, the reference text, a threshold in the scorer's scale."""

    config_keys: ClassVar[frozenset[str] | None] = frozenset({"scale"})

    @classmethod
    def common_keys(cls) -> str:
        return "`config.scale` (default 1); `threshold` (default 0.5 x scale)."
    #: The `value` is the text compared with the output (else Mastra's input).
    value_hint = "give the reference text as a string, or omit value to compare with vars.query / the prompt"

    def check(self) -> None:
        super().check()
        self.check_numbers(self.spec.config, ["scale"])
        for key in self.spec.config:
            if key in ("ignoreCase", "ignoreWhitespace") and not isinstance(self.spec.config[key], bool):
                raise self.error(f"config.{key} must be true or false", key=f"config.{key}")

    def parse(self, value: Any) -> str | None:
        if value is None:
            return None
        if isinstance(value, (dict, list, bool)):
            raise ValueError(f"{self.spec.type} compares text: `value` must be a string")
        return str(value)

    def reference(self, ctx: AssertionContext) -> str:
        value = self.value_of(ctx)
        return value if value is not None else mastra_input(ctx)

    def scaled(self, ctx: AssertionContext, raw: float, what: str, details: dict[str, Any]) -> Score:
        scale = float(ctx.config.get("scale", 1))
        score = raw * scale
        passed, comparison = against(score, self.spec.threshold if self.spec.threshold is not None else 0.5 * scale)
        return Score(passed, score, f"{what}: {comparison}", {**details, "scale": scale})


@register("content-similarity")
class ContentSimilarity(ScaledScorer):
    """Mastra's content-similarity: Dice similarity of character bigrams (string-similarity).

    YAML keys: `value` (reference text; default vars.query / the prompt); `config.ignoreCase` (default true),
    `config.ignoreWhitespace` (default true);
    """

    config_keys = frozenset({"scale", "ignoreCase", "ignoreWhitespace"})

    async def evaluate(self, ctx: AssertionContext) -> Score:
        raw = text_scoring.content_similarity(self.reference(ctx), ctx.output,
                                              ignore_case=ctx.config.get("ignoreCase", True),
                                              ignore_whitespace=ctx.config.get("ignoreWhitespace", True))
        return self.scaled(ctx, raw, "content similarity", {})


@register("textual-difference")
class TextualDifference(ScaledScorer):
    """Mastra's textual-difference: SequenceMatcher similarity ratio (1 = identical).

    Details: changes, lengthDiff, confidence (not part of the score). YAML keys: `value` (reference text;
    default vars.query / the prompt);
    """

    async def evaluate(self, ctx: AssertionContext) -> Score:
        d = text_scoring.textual_difference(self.reference(ctx), ctx.output)
        return self.scaled(ctx, d.ratio, f"similarity ratio ({d.changes} changes)",
                           {"ratio": d.ratio, "changes": d.changes, "lengthDiff": d.length_diff,
                            "confidence": d.confidence})


@register("keyword-coverage")
class KeywordCoverage(ScaledScorer):
    """Mastra's keyword-coverage: share of the reference's keywords (stop words dropped) in the output.

    A reference without keywords scores 1. YAML keys: `value` (reference text; default vars.query / the prompt);
    """

    async def evaluate(self, ctx: AssertionContext) -> Score:
        c = text_scoring.keyword_coverage(self.reference(ctx), ctx.output)
        return self.scaled(ctx, c.score, *_coverage_report(c, "keywords", "matched"))


@register("completeness")
class Completeness(ScaledScorer):
    """Mastra's completeness: share of the reference's words (elements) covered by the output's.

    YAML keys: `value` (reference text; default vars.query / the prompt);
    """

    async def evaluate(self, ctx: AssertionContext) -> Score:
        c = text_scoring.completeness(self.reference(ctx), ctx.output)
        return self.scaled(ctx, c.score, *_coverage_report(c, "elements covered", "covered"))


def _coverage_report(c: Any, noun: str, found_key: str) -> tuple[str, dict[str, Any]]:
    """Reason ("3/4 keywords; missing: x") and details of a matched/missing coverage result."""
    missing = f"; missing: {', '.join(c.missing[:8])}" if c.missing else ""
    return (f"{len(c.matched)}/{len(c.matched) + len(c.missing)} {noun}{missing}",
            {found_key: list(c.matched), "missing": list(c.missing)})


@register("tone-consistency")
class ToneConsistency(ScaledScorer):
    """Mastra's tone scorer (AFINN-165): with `value`, 1 - |sentiment(output) - sentiment(value)|; without,
    the stability of the output's sentiment across its sentences (1 - variance).

    YAML keys: `value` (reference text whose tone the output should match; optional);
    """

    def reference(self, ctx: AssertionContext) -> str:
        value = self.value_of(ctx)
        return value or ""

    async def evaluate(self, ctx: AssertionContext) -> Score:
        ref = self.reference(ctx)
        t = text_scoring.tone_consistency(ctx.output, ref or None)
        if ref:
            details = {"responseSentiment": t.response, "referenceSentiment": t.reference,
                       "difference": abs(t.response - (t.reference or 0.0))}
            what = f"tone: sentiment {t.response:.3f} vs reference {t.reference:.3f}"
        else:
            details = {"avgSentiment": t.response, "sentimentVariance": t.variance}
            what = f"tone stability: sentiment variance {t.variance:.3f}"
        return self.scaled(ctx, t.score, what, details)
