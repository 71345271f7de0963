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
