"""Similarity of the output to a reference: promptfoo's levenshtein, rouge-n, bleu, similar and answer-relevance,
and Mastra's deterministic text scorers (their formulas in grading/scoring/)."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from typing import Any, ClassVar

from evalrun.assertions.base import Assertion, AssertionContext, Score, against, binary
from evalrun.assertions.graded import GradedAssertion, mastra_input
from evalrun.assertions.registry import register
from evalrun.grading import schemas
from evalrun.grading.fence import block
from evalrun.grading.scoring import deterministic as text_scoring
from evalrun.grading.scoring import verdicts as judge_scoring
from evalrun.grading.steps import Step, judge_step


def levenshtein(a: str, b: str) -> int:
    """Edit distance (insertions, deletions, substitutions of one UTF-16 unit each, as JavaScript counts)."""
    from rapidfuzz.distance import Levenshtein as edits  # here: validate imports every assertion module

    if any(ord(c) > 0xFFFF for c in a + b):  # an astral character is two UTF-16 units
        return edits.distance(*(memoryview(t.encode("utf-16-le")).cast("H").tolist() for t in (a, b)))
    return edits.distance(a, b)


_CONTRACTIONS = [re.compile(rf"(?<!\w)({a})({b})(?!\w)", re.I) for a, b in (
    ("can", "not"), ("d", "'ye"), ("gim", "me"), ("gon", "na"), ("got", "ta"), ("lem", "me"), ("more", "'n"),
    ("'t", "is"), ("'t", "was"))] + [re.compile(r"(?<!\w)(wan)(na)(?= )", re.I)]
#: js-rouge's treeBankTokenize, as (pattern, replacement) steps in order.
_TREEBANK = [(re.compile(p), r) for p, r in (
    (r'"', ' " '), (r"\.\.\.", " ... "), (r"[:,](?!\d)", r" \g<0> "), (r"[;@#$%&]", r" \g<0> "),
    (r"([^.])(?<!\b[A-Za-z]\.[A-Za-z])(\.)([\])}>'\s]*)$", r"\1 \2\3 "), (r"[?!]", r" \g<0> "),
    (r"[\]\[(){}<>]", r" \g<0> "), ("--", " -- "), (r"\A|\Z", " "), (r"([^'])' ", r"\1 ' "),
    (r"'([sSmMdD]) ", r" '\1 "), (r"('ll|'LL|'re|'RE|'ve|'VE|n't|N'T) ", r" \1 "))] + [
    (rx, r" \1 \2 ") for rx in _CONTRACTIONS]


def treebank_tokenize(text: str) -> list[str]:
    """Penn Treebank-style tokens, as js-rouge's treeBankTokenize produces them for ordinary prose."""
    t = re.sub(r"\s+", " ", text).strip()
    for rx, replacement in _TREEBANK:
        t = rx.sub(replacement, t)
    return t.split()


def _ngrams(tokens: Sequence[str], n: int) -> list[tuple[str, ...]]:
    return [tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1)]


def rouge_n(candidate: str, reference: str, n: int = 1) -> float:
    """ROUGE-N F1 with clipped n-gram counts on lowercased treebank tokens (promptfoo's rougeNScore)."""
    cand, ref = treebank_tokenize(candidate.lower()), treebank_tokenize(reference.lower())
    if len(cand) < n or len(ref) < n:
        return 0.0
    cg, rg = _ngrams(cand, n), _ngrams(ref, n)
    overlap = (Counter(cg) & Counter(rg)).total()  # clipped counts
    if overlap == 0:
        return 0.0
    p, r = overlap / len(cg), overlap / len(rg)
    return p if p == r else 2 * p * r / (p + r)  # js-rouge's fMeasure (beta 1)


def bleu(candidate: str, references: Sequence[str], weights: Sequence[float] = (0.25,) * 4) -> float:
    """Sentence BLEU-4 with brevity penalty and 1e-7 smoothing of zero precisions (promptfoo's formula)."""
    if not candidate.strip():
        return 0.0
    cand = candidate.lower().strip().split()
    refs = [r.lower().strip().split() for r in references]
    closest = min((len(r) for r in refs), key=lambda k: (abs(k - len(cand)), k))  # ties: the shorter
    usable: list[tuple[float, float]] = []
    for n in range(1, 5):
        cg = _ngrams(cand, n)
        if cg:
            best = max((Counter(cg) & Counter(_ngrams(r, n))).total() for r in refs)
            usable.append((best / len(cg), weights[n - 1]))
    bp = 1.0 if len(cand) > closest else math.exp(1 - closest / len(cand))
    wsum = sum(w for _, w in usable)
    if wsum == 0:
        return 0.0
    return bp * math.exp(sum(w / wsum * math.log(p if p else 1e-7) for p, w in usable))


class _Reference(Assertion):
    """Shared base: the output against the reference string `value`; `measure`'s score passes at >= threshold."""

    requires_value = True
    label: ClassVar[str] = ""
    digits: ClassVar[int] = 2

    def parse(self, value: Any) -> Any:
        if not isinstance(value, str):
            raise ValueError(f"{self.spec.type} needs a string value, got {value!r}")
        return value

    def measure(self, output: str, reference: Any) -> float:
        raise NotImplementedError

    async def evaluate(self, ctx: AssertionContext) -> Score:
        s = self.measure(ctx.output, self.value_of(ctx))
        t = self.threshold or 0.0  # never None: every subclass has a default_threshold
        ok = s >= t
        return Score(ok, s, f"{self.label} score {s:.{self.digits}f} is {'>=' if ok else '<'} threshold {t:g}")


@register("levenshtein")
class Levenshtein(_Reference):
    """Edit distance between output and `value` is at most `threshold`.

    YAML keys: `value` (required): the reference string; `threshold`: maximum distance (default 5).
    Score 1 when it passes, else 0.
    """

    default_threshold = 5

    async def evaluate(self, ctx: AssertionContext) -> Score:
        d = levenshtein(ctx.output, self.value_of(ctx))
        limit = self.threshold or 0.0
        ok = d <= limit
        return binary(ok, f"Levenshtein distance {d} is {'<=' if ok else '>'} threshold {limit:g}", distance=d)


@register("rouge-n")
class RougeN(_Reference):
    """ROUGE-1 F-score between output and `value` (lowercased, treebank tokens) is >= `threshold`.

    YAML keys: `value` (required): the reference string; `threshold` (default 0.75). Score = the ROUGE score
    (`not-` reports 1 - score).
    """

    default_threshold = 0.75
    label = "ROUGE-N"
    measure = staticmethod(rouge_n)  # type: ignore[assignment]


@register("bleu")
class Bleu(_Reference):
    """BLEU-4 score of output against `value` (one reference or a list) is >= `threshold`.

    YAML keys: `value` (required): a reference string or a list of them; `threshold` (default 0.5).
    Whitespace tokens, lowercased. Score = the BLEU score (`not-` reports 1 - score).
    """

    default_threshold = 0.5
    label = "BLEU"
    digits = 4
    measure = staticmethod(bleu)  # type: ignore[assignment]

    def parse(self, value: Any) -> list[str]:
        if isinstance(value, str):
            return [value]
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            return value
        raise ValueError(f"bleu needs a string or a non-empty list of strings, got {value!r}")


N_QUESTIONS = 3


class _Similar(Assertion):
    """The output's embedding against `value`'s (a string, or a list: pass when any is similar enough).

    YAML keys: `value` (required: text or list of texts); `threshold` (default 0.75; for similar:euclidean
    the largest passing distance); `provider` (embedding model, e.g. `{embedding: openai:embedding:MODEL}`).
    Score: the similarity (euclidean: 1 / (1 + distance)); with a list, the best. One embedding request.
    """

    metric = "cosine"
    requires_value = True
    needs_embedder = True
    default_threshold = 0.75
    config_keys = frozenset()
    value_hint = "give the expected text, or a list of texts"

    def parse(self, value: Any) -> list[str]:
        values = value if isinstance(value, list) else [value]
        if not values or not all(isinstance(v, str) and v.strip() for v in values):
            raise ValueError(f"{self.spec.type} needs a non-empty string or list of strings as `value`")
        return list(values)

    async def evaluate(self, ctx: AssertionContext) -> Score:
        values = self.value_of(ctx)
        embedder = ctx.embedder(self.spec)
        vectors = await embedder.embed([ctx.output, *values])
        thr = self.threshold or 0.0
        results = [judge_scoring.similar(vectors[0], v, self.metric, thr) for v in vectors[1:]]
        ok, score, raw = next((r for r in results if r[0]), max(results, key=lambda r: r[1]))
        what = "distance" if self.metric == "euclidean" else f"{self.metric} similarity"
        op = ("<=" if ok else ">") if self.metric == "euclidean" else (">=" if ok else "<")
        which = f" (closest of {len(values)} values)" if len(values) > 1 else ""
        return Score(ok, score, f"{what} {raw:.3f} {op} threshold {thr:g}{which}",
                     {"embedder": embedder.id, "metric": self.metric, "raw": raw})


for _metric, _names, _what in (("cosine", ("similar", "similar:cosine"), "cosine similarity of embeddings"),
                               ("dot", ("similar:dot",), "dot product of embeddings"),
                               ("euclidean", ("similar:euclidean",), "distance of embeddings (lower is closer)")):
    register(*_names)(type(f"Similar{_metric.capitalize()}", (_Similar,), {
        "metric": _metric, "__module__": __name__,
        "__doc__": f"promptfoo's {_names[0]}: {_what}.\n\n" + (_Similar.__doc__ or "").split("\n\n", 1)[1]}))


QUESTIONS: Step[list[str]] = judge_step(
    "judge", "questions", lambda n: schemas.obj({"questions": schemas.exactly(n, {"type": "string"})}),
    lambda r: [str(q) for q in r["questions"]], ("output", "n"), "questions")


@register("answer-relevance")
class AnswerRelevance(GradedAssertion):
    """promptfoo's answer-relevance: the grader writes 3 questions the output answers; the score is their
    mean embedding cosine similarity to the query (`vars.query`, else the prompt).

    One grader call (promptfoo makes 3) and one embedding request; not Mastra's `answer-relevancy` (see
    docs/metrics.md). YAML keys: `threshold` (default 0.7); `provider` (`{text: GRADER, embedding: EMBEDDER}`);
    """

    takes_value = False
    needs_embedder = True
    default_threshold = 0.7
    config_keys = frozenset()
    steps = ("judge",)
    judge_step = QUESTIONS

    async def evaluate(self, ctx: AssertionContext) -> Score:
        query = mastra_input(ctx)
        questions, trace = await self.ask(ctx, {"output": block("ANSWER", ctx.output), "n": N_QUESTIONS},
                                          schema_args=(N_QUESTIONS,))
        embedder = ctx.embedder(self.spec)
        vectors = await embedder.embed([query, *questions])
        score = judge_scoring.answer_relevance(vectors[0], vectors[1:])
        passed, comparison = self.verdict(score)
        return self.score(passed, score, f"mean similarity of {len(questions)} generated questions to the query: "
                          f"{comparison}", {"questions": questions, "embedder": embedder.id}, trace)


class ScaledScorer(Assertion):
    """Shared base: `config.scale`, the reference text, a threshold in the scorer's scale."""

    config_keys: ClassVar[frozenset[str] | None] = frozenset({"scale"})

    @classmethod
    def common_keys(cls) -> str:
        return "`config.scale` (default 1); `threshold` (default 0.5 x scale)."

    value_hint = "give the reference text as a string, or omit value to compare with vars.query / the prompt"

    def check(self) -> None:
        super().check()
        self.check_numbers(self.spec.config, ["scale"])
        for key in ("ignoreCase", "ignoreWhitespace"):
            if not isinstance(self.spec.config.get(key, True), bool):
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
        passed, comparison = against(score, 0.5 * scale if self.spec.threshold is None else self.spec.threshold)
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

    async def evaluate(self, ctx: AssertionContext) -> Score:
        ref = self.value_of(ctx) or ""
        t = text_scoring.tone_consistency(ctx.output, ref or None)
        if ref:
            details = {"responseSentiment": t.response, "referenceSentiment": t.reference,
                       "difference": abs(t.response - (t.reference or 0.0))}
            what = f"tone: sentiment {t.response:.3f} vs reference {t.reference:.3f}"
        else:
            details = {"avgSentiment": t.response, "sentimentVariance": t.variance}
            what = f"tone stability: sentiment variance {t.variance:.3f}"
        return self.scaled(ctx, t.score, what, details)
