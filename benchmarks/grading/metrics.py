"""Figures of the grading benchmark: AUROC, balanced accuracy, and the token-overlap baseline (stdlib only)."""

from __future__ import annotations

import re
from collections.abc import Sequence

#: A plain English stopword list for the baseline (independent of the builtin grader's lexicon).
STOPWORDS = frozenset("""a an the and or but if then of in on at by for with from to into as is are was were be been
being it its this that these those he she they them his her their we you i me my our your not no do does did has have
had will would can could should may might must so than too very also just about over under after before up down out
there here what which who whom whose when where why how all any both each few more most other some such only own same
""".split())
_WORD = re.compile(r"[a-z0-9]+")


def token_overlap(answer: str, context: str) -> float:
    """The baseline: share of the answer's lowercased non-stopword tokens found in the context (1.0 if none)."""
    words = [w for w in _WORD.findall(answer.lower()) if w not in STOPWORDS]
    if not words:
        return 1.0
    ctx = set(_WORD.findall(context.lower()))
    return sum(w in ctx for w in words) / len(words)


def auroc(scores: Sequence[float], labels: Sequence[bool]) -> float:
    """Area under the ROC curve (Mann-Whitney U with average ranks for ties); faithful = positive."""
    order = sorted(range(len(scores)), key=lambda i: scores[i])
    ranks = [0.0] * len(scores)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and scores[order[j + 1]] == scores[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    n_pos = sum(labels)
    n_neg = len(labels) - n_pos
    if not n_pos or not n_neg:
        return float("nan")
    return (sum(r for r, y in zip(ranks, labels, strict=True) if y) - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)


def balanced_accuracy(predicted: Sequence[bool], labels: Sequence[bool]) -> float:
    """Mean of the true-positive and true-negative rates (faithful = positive)."""
    pos = [p for p, y in zip(predicted, labels, strict=True) if y]
    neg = [p for p, y in zip(predicted, labels, strict=True) if not y]
    if not pos or not neg:
        return float("nan")
    return (sum(pos) / len(pos) + sum(not p for p in neg) / len(neg)) / 2
