"""Graded RAG assertions over the claim pipeline: faithfulness, hallucination, context-relevance, -recall and
-precision (zero claims passes with score None); the noise assertions are in noise.py."""

from __future__ import annotations

from typing import Any, ClassVar

from evalrun.assertions.base import AssertionContext, Score
from evalrun.assertions.graded import GradedAssertion, plural, query_of, quote
from evalrun.assertions.registry import register
from evalrun.errors import AssertionRuntimeError
from evalrun.grading.scoring import claims as scoring
from evalrun.types import Verdict

_PENALTY_KEYS = {"unusedHighRelevanceContext": "unused_high_penalty", "missingContextPerItem": "missing_per_item",
                 "maxMissingContextPenalty": "max_missing_penalty"}


def claims_reason(claims: list[str], verdicts: list[Verdict], passed: bool, bad_word: str, shown: int = 3) -> str:
    """What decided a claim-based score: the claims not supported, weakest first, each with its verdict, support
    and the grader's reason (which quotes the closest evidence). A failing score always names the claims that
    pulled it down, also when the grader labelled each of them supported."""
    support = scoring.claim_support([v.verdict for v in verdicts], [v.support for v in verdicts])
    order = sorted(range(len(claims)), key=lambda i: (support[i], i))
    bad = [i for i in order if verdicts[i].verdict != "supported"]
    if bad:
        head, named = f"{plural(len(claims), 'claim')}, {len(bad)} {bad_word}: ", bad
    elif not passed:
        head, named = f"{plural(len(claims), 'claim')}, each supported but not firmly enough; weakest: ", order[:1]
    else:
        return f"{plural(len(claims), 'claim')}, all supported"
    parts = []
    for i in named[:shown]:
        v = verdicts[i]
        label = v.verdict if v.support is None else f"{v.verdict}, support {support[i]:.2f}"
        why = " ".join(v.reason.split())
        parts.append(f"{quote(claims[i])} {label}" + (f" ({why[:157] + '...' if len(why) > 160 else why})"
                                                      if why else ""))
    more = f"; and {len(named) - shown} more" if len(named) > shown else ""
    return head + "; ".join(parts) + more


class _ContextClaims(GradedAssertion):
    """Claims of the output verified against the context (faithfulness, hallucination): 2 grader calls."""

    uses_context = True
    steps = ("verify", "extract")
    #: How a claim that is not supported is named in the reason, and what zero claims mean.
    bad_word: ClassVar[str] = ""
    no_claims: ClassVar[str] = ""

    def formula(self, ctx: AssertionContext, verdicts: list[Verdict]) -> float | None:
        raise NotImplementedError

    async def evaluate(self, ctx: AssertionContext) -> Score:
        chunks = await self.context_texts(ctx)
        grader, trace = self.grader_for(ctx)
        question = query_of(ctx, required=False)
        claims = await grader.extract_claims(ctx.output, trace, question=question)
        verdicts = await grader.verify(claims, chunks, trace, question=question) if claims else []
        details: dict[str, Any] = {
            "claims": [{"text": c, "verdict": v.verdict, "reason": v.reason, "support": v.support,
                        "chunks": list(v.evidence) if v.verdict == "supported" else [],
                        "evidence": list(v.evidence)} for c, v in zip(claims, verdicts, strict=True)],
            "context": chunks}
        if not claims:
            return self.score(True, None, f"output made no factual claims: {self.no_claims} (no score)", details,
                              trace)
        value = self.formula(ctx, verdicts)
        assert value is not None
        passed, comparison = self.verdict(value)
        reason = claims_reason(claims, verdicts, passed, self.bad_word)
        return self.score(passed, value, f"{reason}: {comparison}", details, trace)


@register("faithfulness", "context-faithfulness")
class Faithfulness(_ContextClaims):
    """Supported claims / all claims of the output, against the context. Higher is better.

    Zero claims: passes with no score; a rubricPrompt list maps to [extract, verify] as in promptfoo. YAML keys:
    `threshold` (default 0.7), `config.lenient` (only contradicted claims count against);
    """

    default_threshold = 0.7
    config_keys = frozenset({"lenient"})
    list_steps = ("extract", "verify")  # promptfoo: [claim-extraction prompt, verification prompt]
    bad_word = "not supported by the context"
    no_claims = "nothing to be unfaithful"

    def check(self) -> None:
        super().check()
        if not isinstance(self.spec.config.get("lenient", False), bool):
            raise self.error("lenient must be true or false", key="config.lenient")

    def formula(self, ctx: AssertionContext, verdicts: list[Verdict]) -> float | None:
        return scoring.faithfulness([v.verdict for v in verdicts], lenient=bool(ctx.config.get("lenient", False)),
                                    support=[v.support for v in verdicts])


@register("hallucination")
class Hallucination(_ContextClaims):
    """Contradicted or unsupported claims / all claims, against the context. Lower is better.

    Zero claims: passes with no score. YAML keys: `threshold` (default 0.3; passes when score <= threshold);
    """

    default_threshold = 0.3
    lower_is_better = True
    config_keys = frozenset()
    bad_word = "hallucinated"
    no_claims = "nothing can be hallucinated"

    def formula(self, ctx: AssertionContext, verdicts: list[Verdict]) -> float | None:
        return scoring.hallucination([v.verdict for v in verdicts], support=[v.support for v in verdicts])


@register("context-relevance")
class ContextRelevance(GradedAssertion):
    """Mastra's weighted-level context relevance of the chunks to `vars.query`. Higher is better.

    One grader call. YAML keys: `threshold` (default 0.5, in `scale` units), `config.penalties`
    {unusedHighRelevanceContext 0.1, missingContextPerItem 0.15, maxMissingContextPenalty 0.5}, `config.scale` (1);
    """

    uses_context = True
    default_threshold = 0.5
    config_keys = frozenset({"penalties", "scale"})
    steps = ("classify",)

    def check(self) -> None:
        super().check()
        cfg = self.spec.config
        penalties = cfg.get("penalties") or {}
        if not isinstance(penalties, dict):
            raise self.error("penalties must be a mapping", key="config.penalties")
        for k in penalties:
            if k not in _PENALTY_KEYS:
                raise self.error(f"unknown penalty {k!r}", key=f"config.penalties.{k}",
                                 hint=f"allowed: {', '.join(_PENALTY_KEYS)}")
        self.check_numbers(penalties, penalties, "config.penalties.")
        self.check_numbers(cfg, ["scale"])

    async def evaluate(self, ctx: AssertionContext) -> Score:
        query = query_of(ctx, required=True)
        assert query is not None
        chunks = await self.context_texts(ctx)
        grader, trace = self.grader_for(ctx)
        judged = await grader.classify_chunks(query, ctx.output, chunks, trace)
        penalties = {_PENALTY_KEYS[k]: float(v) for k, v in (ctx.config.get("penalties") or {}).items()}
        scale = float(ctx.config.get("scale", 1.0))
        value = scoring.context_relevance([j.level for j in judged.chunks], [j.used for j in judged.chunks],
                                          len(judged.missing), scale=scale, **penalties)
        passed, comparison = self.verdict(value)
        levels = [j.level for j in judged.chunks]
        counts = ", ".join(f"{levels.count(lv)} {lv}" for lv in ("high", "medium", "low", "none")
                           if levels.count(lv))
        unused = [str(k + 1) for k, j in enumerate(judged.chunks) if j.level == "high" and not j.used]
        notes = [counts or "no chunks"]
        if unused:
            notes.append(f"high but unused: chunk {', '.join(unused)}")
        if judged.missing:
            notes.append(f"{len(judged.missing)} missing: {'; '.join(quote(m, 60) for m in judged.missing[:3])}")
        details = {"chunks": [{"text": t, "level": j.level, "used": j.used, "reason": j.reason}
                              for t, j in zip(chunks, judged.chunks, strict=True)],
                   "missing": list(judged.missing)}
        reason = f"{plural(len(chunks), 'chunk')} ({'; '.join(notes)}): {comparison}"
        return self.score(passed, value, reason, details, trace)


class _ReferenceClaims(GradedAssertion):
    """Claims of the reference answer (`value`) attributed to the chunks: 2 grader calls."""

    uses_context = True
    requires_value = True
    config_keys = frozenset()
    steps = ("attribute", "extract")
    value_hint = "give the reference (expected) answer as a string"
    value_text = "the reference answer"

    async def _attribution(self, ctx: AssertionContext) -> tuple[list[str], list[str], list[list[bool]], Any]:
        reference = self.value_of(ctx)
        chunks = await self.context_texts(ctx)
        grader, trace = self.grader_for(ctx)
        claims = await grader.extract_claims(reference, trace)
        if not claims:
            raise AssertionRuntimeError("the reference answer (`value`) makes no factual "
                                        "claims to attribute")
        matrix = await grader.attribute(claims, chunks, trace)
        return claims, chunks, matrix, trace


@register("context-recall")
class ContextRecall(_ReferenceClaims):
    """Share of the reference answer's claims that some context chunk entails. Higher is better.

    YAML keys: `value` (reference answer), `threshold` (default 0.7);
    """

    default_threshold = 0.7

    async def evaluate(self, ctx: AssertionContext) -> Score:
        claims, chunks, matrix, trace = await self._attribution(ctx)
        attributed = [any(row) for row in matrix]
        value = scoring.context_recall(attributed)
        assert value is not None
        passed, comparison = self.verdict(value)
        missing = [c for c, a in zip(claims, attributed, strict=True) if not a]
        listed = f" ({'; '.join(quote(c) for c in missing[:3])})" if missing else ""
        details = {"claims": [{"text": c, "chunks": [k for k, e in enumerate(row) if e], "attributed": a}
                              for c, row, a in zip(claims, matrix, attributed, strict=True)],
                   "context": chunks}
        reason = f"{plural(len(claims), 'reference claim')}, {len(missing)} not in the context{listed}: {comparison}"
        return self.score(passed, value, reason, details, trace)


@register("context-precision")
class ContextPrecision(_ReferenceClaims):
    """Mean average precision of the chunk order: a chunk is useful when it entails a reference claim.

    Higher is better. YAML keys: `value` (reference answer), `threshold` (default 0.5);
    """

    default_threshold = 0.5

    async def evaluate(self, ctx: AssertionContext) -> Score:
        claims, chunks, matrix, trace = await self._attribution(ctx)
        useful = scoring.chunk_relevance(matrix, len(chunks))
        value = scoring.context_precision(useful)
        passed, comparison = self.verdict(value)
        details = {"chunks": [{"text": t, "useful": u} for t, u in zip(chunks, useful, strict=True)],
                   "claims": [{"text": c, "chunks": [k for k, e in enumerate(row) if e]}
                              for c, row in zip(claims, matrix, strict=True)]}
        ranks = ", ".join(str(k + 1) for k, u in enumerate(useful) if u) or "none"
        reason = f"{sum(useful)} of {plural(len(chunks), 'chunk')} useful (positions {ranks}): {comparison}"
        return self.score(passed, value, reason, details, trace)
