"""Agreement statistics of a grader's verdicts and scores against labels: pure (arrays in, numbers out, no I/O).

Conventions: `human` and `predicted` are booleans, True = PASS; a score "passes high" when a higher score means PASS
(`higher=True`). A figure that is undefined on its input (a class absent) is None, never NaN.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

Bools = npt.NDArray[np.bool_]
Floats = npt.NDArray[np.float64]

#: Default bootstrap resamples and folds of the cross-validated threshold.
BOOTSTRAP = 1000
FOLDS = 5


def _arrays(predicted: Sequence[bool], human: Sequence[bool]) -> tuple[Bools, Bools]:
    p, h = np.asarray(predicted, dtype=bool), np.asarray(human, dtype=bool)
    if p.shape != h.shape:
        raise ValueError("predicted and human differ in length")
    return p, h


def confusion(predicted: Sequence[bool], human: Sequence[bool]) -> dict[str, dict[str, int]]:
    """Counts {human_pass|human_fail: {grader_pass, grader_fail}}."""
    p, h = _arrays(predicted, human)
    return {"human_pass": {"grader_pass": int(np.sum(p & h)), "grader_fail": int(np.sum(~p & h))},
            "human_fail": {"grader_pass": int(np.sum(p & ~h)), "grader_fail": int(np.sum(~p & ~h))}}


def balanced_accuracy(predicted: Sequence[bool], human: Sequence[bool]) -> float | None:
    """Mean of the recall of PASS and the recall of FAIL."""
    p, h = _arrays(predicted, human)
    if h.all() or not h.any():
        return None
    return float((np.mean(p[h]) + np.mean(~p[~h])) / 2)


def cohen_kappa(predicted: Sequence[bool], human: Sequence[bool]) -> float | None:
    """(observed - chance agreement) / (1 - chance agreement); None when chance agreement is 1."""
    p, h = _arrays(predicted, human)
    if not len(p):
        return None
    observed = float(np.mean(p == h))
    chance = float(np.mean(p) * np.mean(h) + np.mean(~p) * np.mean(~h))
    return None if chance >= 1.0 else (observed - chance) / (1.0 - chance)


def precision_fail(predicted: Sequence[bool], human: Sequence[bool]) -> float | None:
    """Of the grader's FAILs, the share a person also fails."""
    p, h = _arrays(predicted, human)
    return None if p.all() else float(np.mean(~h[~p]))


def recall_fail(predicted: Sequence[bool], human: Sequence[bool]) -> float | None:
    """Of a person's FAILs, the share the grader also fails."""
    p, h = _arrays(predicted, human)
    return None if h.all() else float(np.mean(~p[~h]))


def average_ranks(values: Sequence[float] | Floats) -> Floats:
    """1-based ranks, tied values sharing the mean of their ranks."""
    v = np.asarray(values, dtype=float)
    order = np.argsort(v, kind="mergesort")
    ranks = np.empty(len(v))
    sorted_v = v[order]
    start = 0
    while start < len(v):
        end = start
        while end + 1 < len(v) and sorted_v[end + 1] == sorted_v[start]:
            end += 1
        ranks[order[start:end + 1]] = (start + end) / 2 + 1
        start = end + 1
    return ranks


def auroc(scores: Sequence[float], human: Sequence[bool], higher: bool = True) -> float | None:
    """Probability that a PASS-labelled case outscores a FAIL-labelled one (ties count one half): Mann-Whitney U
    over average ranks. `higher=False`: a lower score means PASS."""
    s = np.asarray(scores, dtype=float) * (1.0 if higher else -1.0)
    h = np.asarray(human, dtype=bool)
    n_pos, n_neg = int(h.sum()), int((~h).sum())
    if not n_pos or not n_neg:
        return None
    ranks = average_ranks(s)
    return float((ranks[h].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def passes(scores: Sequence[float] | Floats, threshold: float, higher: bool = True) -> Bools:
    """Verdicts at `threshold`: score >= threshold (higher) or score <= threshold (lower)."""
    s = np.asarray(scores, dtype=float)
    return s >= threshold if higher else s <= threshold


def candidates(scores: Sequence[float] | Floats) -> list[float]:
    """Thresholds worth trying: the midpoints between adjacent distinct scores, and one beyond each end."""
    u = np.unique(np.asarray(scores, dtype=float))
    if not len(u):
        return []
    mids = ((u[:-1] + u[1:]) / 2).tolist()
    return [float(u[0]) - 1.0, *mids, float(u[-1]) + 1.0]


def best_threshold(scores: Sequence[float] | Floats, human: Sequence[bool] | Bools,
                   higher: bool = True) -> tuple[float, float] | None:
    """(threshold, its balanced accuracy) maximising balanced accuracy on these labels; among equal ones the
    first in the order of `candidates` (the lowest). None when a class is absent."""
    h = np.asarray(human, dtype=bool)
    if h.all() or not h.any():
        return None
    best: tuple[float, float] | None = None
    for t in candidates(scores):
        ba = balanced_accuracy(passes(scores, t, higher).tolist(), h.tolist())
        if ba is not None and (best is None or ba > best[1] + 1e-12):
            best = (t, ba)
    return best


def folds(human: Sequence[bool], k: int, seed: int) -> list[int]:
    """Stratified fold of each item (0..k-1): each class shuffled with `seed`, then dealt round-robin."""
    h = np.asarray(human, dtype=bool)
    rng = np.random.default_rng(seed)
    fold = np.zeros(len(h), dtype=int)
    offset = 0
    for cls in (True, False):
        idx = np.flatnonzero(h == cls)
        rng.shuffle(idx)
        fold[idx] = (np.arange(len(idx)) + offset) % k
        offset += len(idx)
    return [int(f) for f in fold]


@dataclass(frozen=True)
class CrossValidated:
    """A threshold chosen on all labels, and how well the choosing generalises (out of fold)."""

    threshold: float  # chosen on all the labels
    in_sample: float  # its balanced accuracy on them (optimistic: shown only beside the out-of-fold one)
    oof_balanced_accuracy: float | None  # of the out-of-fold verdicts, each by a threshold chosen without it
    fold_of: tuple[int, ...]
    fold_thresholds: tuple[float, ...]
    oof_predicted: tuple[bool, ...]


def cross_validated_threshold(scores: Sequence[float], human: Sequence[bool], higher: bool = True,
                              k: int = FOLDS, seed: int = 0,
                              fold_of: Sequence[int] | None = None) -> CrossValidated | None:
    """The balanced-accuracy threshold and its out-of-fold figure by stratified k-fold (`folds`; k capped by the
    smaller class, or the given `fold_of`); None when a class has fewer than 2 labels."""
    s, h = np.asarray(scores, dtype=float), np.asarray(human, dtype=bool)
    if fold_of is not None:
        k = max(fold_of) + 1
    k = min(k, int(h.sum()), int((~h).sum()))
    whole = best_threshold(s, h, higher)
    if whole is None or k < 2:
        return None
    if fold_of is None:
        fold_of = folds(h.tolist(), k, seed)
    f = np.asarray(fold_of)
    predicted = np.zeros(len(s), dtype=bool)
    chosen = []
    for i in range(k):
        train = f != i
        t = best_threshold(s[train], h[train], higher)
        thr = whole[0] if t is None else t[0]
        chosen.append(thr)
        predicted[~train] = passes(s[~train], thr, higher)
    return CrossValidated(whole[0], whole[1], balanced_accuracy(predicted.tolist(), h.tolist()), tuple(fold_of),
                          tuple(chosen), tuple(bool(x) for x in predicted))


def bootstrap(statistic: Callable[[list[int]], float | None], n: int, resamples: int = BOOTSTRAP,
              seed: int = 0) -> tuple[float, float] | None:
    """95% percentile interval of `statistic(indices)` over `resamples` resamples of range(n) with replacement
    (resamples where it is undefined left out); None when fewer than half are defined."""
    if n < 2:
        return None
    rng = np.random.default_rng(seed)
    values = []
    for _ in range(resamples):
        v = statistic(rng.integers(0, n, n).tolist())
        if v is not None:
            values.append(v)
    if len(values) < resamples / 2:
        return None
    lo, hi = np.percentile(values, [2.5, 97.5])
    return float(lo), float(hi)


def agreement(a: Sequence[bool], b: Sequence[bool]) -> float | None:
    """Share of items on which two verdict lists agree."""
    x, y = _arrays(a, b)
    return float(np.mean(x == y)) if len(x) else None
