"""Word-overlap metrics of the output against reference texts: promptfoo's gleu (Google-BLEU) and meteor
(Banerjee & Lavie 2005, as NLTK's meteor_score computes it). bleu and rouge-n live in similarity.py."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

from evalrun.assertions.base import Assertion, AssertionContext, Score
from evalrun.assertions.registry import register
from evalrun.errors import AssertionRuntimeError

_TRAILING_DOTS = re.compile(r"\.+$")


def _gleu_words(text: str) -> list[str]:
    return [_TRAILING_DOTS.sub("", w) for w in re.split(r"\s+", text.lower().strip())]


def gleu(candidate: str, references: Sequence[str], min_n: int = 1, max_n: int = 4) -> float:
    """promptfoo's GLEU: over n-grams of 1..4 lowercased whitespace words (trailing dots dropped), the smaller of
    precision and recall of the clipped matches; the best over the references (1 for an identical one)."""
    cand = _gleu_words(candidate)
    best = 0.0
    for reference in references:
        ref = _gleu_words(reference)
        if cand == ref:
            return 1.0
        matches = cand_total = ref_total = 0
        for n in range(min_n, max_n + 1):
            cg = [" ".join(cand[i:i + n]) for i in range(len(cand) - n + 1)] if n <= len(cand) else []
            rg = [" ".join(ref[i:i + n]) for i in range(len(ref) - n + 1)] if n <= len(ref) else []
            matches += (Counter(cg) & Counter(rg)).total()
            cand_total += len(cg)
            ref_total += len(rg)
        if cand_total and ref_total:
            best = max(best, min(matches / cand_total, matches / ref_total))
    return best


def references(type_name: str, value: Any) -> list[str]:
    """`value` as a list of reference texts (a string or a non-empty list of strings)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return value
    raise ValueError(f'"{type_name}" assertion must have a string or array of strings value, got {value!r}')


class _Overlap(Assertion):
    requires_value = True
    default_threshold = 0.5
    config_keys = frozenset()
    label = ""
    value_hint = "give the reference text, or a list of them"

    def parse(self, value: Any) -> list[str]:
        return references(self.spec.type, value)

    def measure(self, output: str, refs: list[str]) -> float:
        raise NotImplementedError

    async def evaluate(self, ctx: AssertionContext) -> Score:
        if not ctx.output:
            raise AssertionRuntimeError(f"{self.spec.type} cannot score an empty output")
        score = self.measure(ctx.output, self.value_of(ctx))
        threshold = self.threshold if self.threshold is not None else 0.5
        passed = score >= threshold
        return Score(passed, score, f"{self.label} score {score:.4f} is {'>=' if passed else 'less than'} "
                                    f"threshold {threshold:g}")


@register("gleu")
class Gleu(_Overlap):
    """GLEU (Google-BLEU) of the output against `value` is >= `threshold`.

    Over the 1- to 4-grams of lowercased whitespace words (trailing periods dropped): min(precision, recall) of
    the clipped matches; with several references the best. YAML keys: `value` (required): a reference text or
    a list of them; `threshold` (default 0.5). Score = GLEU (`not-` reports 1 - score). An empty output is an
    ERROR (as promptfoo throws).
    """

    label = "GLEU"

    def measure(self, output: str, refs: list[str]) -> float:
        return gleu(output, refs)


Pair = tuple[int, int]


def _align(cand: list[tuple[int, str]], ref: list[tuple[int, str]]) -> tuple[list[Pair], list[tuple[int, str]],
                                                                            list[tuple[int, str]]]:
    """NLTK's _match_enums: from the last candidate word back, each matches the last unmatched equal reference
    word; returns the (candidate index, reference index) pairs and the words left on each side."""
    cand, ref = list(cand), list(ref)
    pairs: list[Pair] = []
    for i in range(len(cand) - 1, -1, -1):
        for j in range(len(ref) - 1, -1, -1):
            if cand[i][1] == ref[j][1]:
                pairs.append((cand[i][0], ref[j][0]))
                del cand[i], ref[j]
                break
    return pairs, cand, ref


def porter_stemmer() -> Any:
    """NLTK's Porter stemmer (the optional `evalrun[meteor]` extra: `pip install 'evalrun-llm[meteor]'`), or None
    when NLTK is not installed."""
    try:
        from nltk.stem.porter import PorterStemmer  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return None
    return PorterStemmer()


def chunks(pairs: Sequence[Pair]) -> int:
    """Runs of matches adjacent in both the candidate and the reference (pairs sorted by candidate index)."""
    return sum(1 for k, (i, j) in enumerate(pairs) if k == 0 or (i, j) != (pairs[k - 1][0] + 1, pairs[k - 1][1] + 1))


def meteor_one(candidate: list[str], reference: list[str], alpha: float = 0.9, beta: float = 3.0,
               gamma: float = 0.5, stemmer: Any = None) -> float:
    """METEOR of pre-split words against one reference (Banerjee & Lavie 2005 as NLTK's meteor_score computes
    it): exact matches of lowercased words, then, given a `stemmer` (an object with .stem(word)), of their stems;
    Fmean = P*R / (alpha*P + (1-alpha)*R); score = Fmean * (1 - gamma * (chunks / matches) ** beta)."""
    cand = [(i, w.lower()) for i, w in enumerate(candidate)]
    ref = [(i, w.lower()) for i, w in enumerate(reference)]
    pairs, cand_left, ref_left = _align(cand, ref)
    if stemmer is not None:
        more, _, _ = _align([(i, stemmer.stem(w)) for i, w in cand_left], [(i, stemmer.stem(w)) for i, w in ref_left])
        pairs += more
    if not pairs or not candidate or not reference:
        return 0.0
    pairs.sort(key=lambda p: p[0])
    precision, recall = len(pairs) / len(candidate), len(pairs) / len(reference)
    denominator = alpha * precision + (1 - alpha) * recall
    if denominator == 0:
        return 0.0
    fmean = precision * recall / denominator
    return (1 - gamma * (chunks(pairs) / len(pairs)) ** beta) * fmean


def _meteor_words(text: str) -> list[str]:
    return [_TRAILING_DOTS.sub("", w) for w in re.split(r"\s+", text)]


@register("meteor")
class Meteor(_Overlap):
    """METEOR of the output against `value` is >= `threshold` (the best over several references).

    Words split on whitespace (trailing periods dropped), lowercased, matched exactly, then by Porter stem when
    the optional `evalrun[meteor]` extra (NLTK) is installed; no WordNet synonyms (promptfoo matches them too).
    Fmean = 10PR / (R + 9P) with
    the default alpha; penalty = gamma * (chunks / matches) ** beta. YAML keys: `value` (required): a reference
    text or a list of them; `threshold` (default 0.5); `config.alpha` (0.9), `config.beta` (3), `config.gamma`
    (0.5). Score = METEOR (`not-` reports 1 - score). An empty output is an ERROR.
    """

    label = "METEOR"
    config_keys = frozenset({"alpha", "beta", "gamma"})

    def check(self) -> None:
        super().check()
        for key in ("alpha", "beta", "gamma"):
            v = self.spec.config.get(key)
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0
                                  or (key != "beta" and v > 1)):
                raise self.error(f"config.{key} must be a number{' from 0 to 1' if key != 'beta' else ' >= 0'}, "
                                 f"got {v!r}", key=f"config.{key}")

    def measure(self, output: str, refs: list[str]) -> float:
        cfg = self.spec.config
        words, stemmer = _meteor_words(output), porter_stemmer()
        return max(meteor_one(words, _meteor_words(r), float(cfg.get("alpha", 0.9)), float(cfg.get("beta", 3)),
                              float(cfg.get("gamma", 0.5)), stemmer) for r in refs)
