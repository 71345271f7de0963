"""Reference-similarity assertions: levenshtein, rouge-n, bleu (promptfoo's formulas and defaults)."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

from rapidfuzz.distance import Levenshtein as edits

from evalrun.assertions.base import Assertion, AssertionContext, Score, binary
from evalrun.assertions.registry import register


def levenshtein(a: str, b: str) -> int:
    """Edit distance (insertions, deletions, substitutions of one UTF-16 unit each, as JavaScript counts)."""
    if any(ord(c) > 0xFFFF for c in a + b):  # an astral character is two UTF-16 units
        return edits.distance(*(memoryview(t.encode("utf-16-le")).cast("H").tolist() for t in (a, b)))
    return edits.distance(a, b)


# ------------------------------------------------------------------ tokenizers
_CONTRACTIONS = [re.compile(rf"(?<!\w)({a})({b})(?!\w)", re.I) for a, b in (
    ("can", "not"), ("d", "'ye"), ("gim", "me"), ("gon", "na"), ("got", "ta"), ("lem", "me"), ("more", "'n"),
    ("'t", "is"), ("'t", "was"))] + [re.compile(r"(?<!\w)(wan)(na)(?= )", re.I)]


def treebank_tokenize(text: str) -> list[str]:
    """Penn Treebank-style tokens, as js-rouge's treeBankTokenize produces them for ordinary prose."""
    t = re.sub(r"\s+", " ", text).strip()
    if not t:
        return []
    t = t.replace('"', ' " ')
    t = t.replace("...", " ... ")
    t = re.sub(r"[:,](?!\d)", r" \g<0> ", t)
    t = re.sub(r"[;@#$%&]", r" \g<0> ", t)
    t = re.sub(r"([^.])(?<!\b[A-Za-z]\.[A-Za-z])(\.)([\])}>'\s]*)$", r"\1 \2\3 ", t)
    t = re.sub(r"[?!]", r" \g<0> ", t)
    t = re.sub(r"[\]\[(){}<>]", r" \g<0> ", t)
    t = t.replace("--", " -- ")
    t = f" {t} "
    t = re.sub(r"([^'])' ", r"\1 ' ", t)
    t = re.sub(r"'([sSmMdD]) ", r" '\1 ", t)
    t = re.sub(r"('ll|'LL|'re|'RE|'ve|'VE|n't|N'T) ", r" \1 ", t)
    for rx in _CONTRACTIONS:
        t = rx.sub(r" \1 \2 ", t)
    return t.split()


def _ngrams(tokens: Sequence[str], n: int) -> list[tuple[str, ...]]:
    return [tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1)]


def f_measure(p: float, r: float) -> float:
    """F1 of precision and recall (js-rouge's fMeasure with beta 1)."""
    if p == r:
        return p
    if p == 0 or r == 0:
        return 0.0
    return 2 * p * r / (p + r)


def rouge_n(candidate: str, reference: str, n: int = 1) -> float:
    """ROUGE-N F1 with clipped n-gram counts on lowercased treebank tokens (promptfoo's rougeNScore)."""
    cand, ref = treebank_tokenize(candidate.lower()), treebank_tokenize(reference.lower())
    if len(cand) < n or len(ref) < n:
        return 0.0
    cg, rg = _ngrams(cand, n), _ngrams(ref, n)
    rc = Counter(rg)
    overlap = sum(min(c, rc[g]) for g, c in Counter(cg).items())
    if overlap == 0:
        return 0.0
    return f_measure(overlap / len(cg), overlap / len(rg))


def bleu(candidate: str, references: Sequence[str], weights: Sequence[float] = (0.25,) * 4) -> float:
    """Sentence BLEU-4 with brevity penalty and 1e-7 smoothing of zero precisions (promptfoo's formula)."""
    if not candidate.strip():
        return 0.0
    cand = candidate.lower().strip().split()
    refs = [r.lower().strip().split() for r in references]
    closest = refs[0].__len__()
    for r in refs[1:]:
        d, dp = abs(len(r) - len(cand)), abs(closest - len(cand))
        if d < dp or (d == dp and len(r) < closest):
            closest = len(r)
    usable: list[tuple[float, float]] = []
    for n in range(1, 5):
        cg = _ngrams(cand, n)
        if not cg:
            continue
        counts = Counter(cg)
        best = 0
        for r in refs:
            rc = Counter(_ngrams(r, n))
            best = max(best, sum(min(c, rc[g]) for g, c in counts.items()))
        usable.append((best / len(cg), weights[n - 1]))
    bp = 1.0 if len(cand) > closest else math.exp(1 - closest / len(cand))
    wsum = sum(w for _, w in usable)
    if wsum == 0:
        return 0.0
    return bp * math.exp(sum(w / wsum * math.log(p if p else 1e-7) for p, w in usable))


# ------------------------------------------------------------------ handlers
class _StringRef(Assertion):
    requires_value = True

    def parse(self, value: Any) -> str:
        if not isinstance(value, str):
            raise ValueError(f"{self.spec.type} needs a string value, got {value!r}")
        return value


@register("levenshtein")
class Levenshtein(_StringRef):
    """Edit distance between output and `value` is at most `threshold`.

    YAML keys: `value` (required): the reference string; `threshold`: maximum distance (default 5).
    Score 1 when it passes, else 0.
    """

    default_threshold = 5

    async def evaluate(self, ctx: AssertionContext) -> Score:
        ref = self.value_of(ctx)
        d = levenshtein(ctx.output, ref)
        limit = self.threshold if self.threshold is not None else 5
        ok = d <= limit
        return binary(ok, f"Levenshtein distance {d} is {'<=' if ok else '>'} threshold {limit:g}", distance=d)


@register("rouge-n")
class RougeN(_StringRef):
    """ROUGE-1 F-score between output and `value` (lowercased, treebank tokens) is >= `threshold`.

    YAML keys: `value` (required): the reference string; `threshold` (default 0.75). Score = the ROUGE score
    (`not-` reports 1 - score).
    """

    default_threshold = 0.75

    async def evaluate(self, ctx: AssertionContext) -> Score:
        s = rouge_n(ctx.output, self.value_of(ctx))
        t = self.threshold if self.threshold is not None else 0.75
        ok = s >= t
        return Score(ok, s, f"ROUGE-N score {s:.2f} is {'>=' if ok else '<'} threshold {t:g}")


@register("bleu")
class Bleu(Assertion):
    """BLEU-4 score of output against `value` (one reference or a list) is >= `threshold`.

    YAML keys: `value` (required): a reference string or a list of them; `threshold` (default 0.5).
    Whitespace tokens, lowercased. Score = the BLEU score (`not-` reports 1 - score).
    """

    requires_value = True
    default_threshold = 0.5

    def parse(self, value: Any) -> list[str]:
        if isinstance(value, str):
            return [value]
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            return value
        raise ValueError(f"bleu needs a string or a non-empty list of strings, got {value!r}")

    async def evaluate(self, ctx: AssertionContext) -> Score:
        s = bleu(ctx.output, self.value_of(ctx))
        t = self.threshold if self.threshold is not None else 0.5
        ok = s >= t
        return Score(ok, s, f"BLEU score {s:.4f} is {'>=' if ok else '<'} threshold {t:g}")
