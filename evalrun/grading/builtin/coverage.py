"""Coverage of a claim by evidence: key weights, weighted coverage, and the best-covering units.

A claim's keys weigh `MATERIAL_WEIGHT` (named entities, numbers, months), `LIGHT_WEIGHT` (frequent
low-information words) or 1. `weighted_coverage` is the weighted share of the claim's keys found in a unit;
`best_units` ranks evidence units by it through the inverted index.
"""

from __future__ import annotations

import heapq
from collections import Counter
from itertools import chain
from operator import neg as neg_

from evalrun.grading.builtin.lexicon import LIGHT_WORDS
from evalrun.grading.builtin.stemming import stem

#: Weight of a named entity, number or month in the coverage (other content words weigh 1).
MATERIAL_WEIGHT = 2.0
#: Weight of a frequent, low-information word ("take", "place", "make": lexicon.LIGHT_WORDS).
LIGHT_WEIGHT = 0.5
_CANDIDATES = 6  # evidence units examined closely per claim
#: Keys of the frequent, low-information words.
LIGHT_KEYS = frozenset(stem(w) for w in LIGHT_WORDS)


def weighted_coverage(w: dict[str, float], total: float, keys: frozenset[str],
                      exclude: frozenset[str] = frozenset()) -> float:
    """Weighted share of the claim's keys (`w`) found in `keys`, leaving out `exclude` (summed in the claim's
    order, so the result does not depend on set iteration order)."""
    if exclude:
        total -= sum(v for k, v in w.items() if k in exclude)
        found = (w.keys() & keys) - exclude
    else:
        found = w.keys() & keys
    if total <= 0 or not found:
        return 0.0
    return sum(v for k, v in w.items() if k in found) / total


def best_units(index: dict[str, tuple[int, ...]], w: dict[str, float], total: float,
               limit: int = _CANDIDATES) -> list[tuple[float, int]]:
    """(coverage, unit id) of the `limit` units covering most of the claim, best first (ties: earlier unit).

    Accumulated over the inverted index: the cost is the number of postings of the claim's keys, not the
    number of evidence units times the claim's length. Weights are counted in half-units (every weight is a
    multiple of 0.5) so that the counting runs in C (`Counter.update`); the sums are exact.
    """
    if any(v * 2 != round(v * 2) for v in w.values()):  # weights changed to other fractions: plain sums
        plain: dict[int, float] = {}
        for k, weight in w.items():
            for i in index.get(k, ()):
                plain[i] = plain.get(i, 0.0) + weight
        return [(s / total, i) for i, s in heapq.nsmallest(limit, plain.items(), key=lambda x: (-x[1], x[0]))]
    acc: Counter[int] = Counter()
    acc.update(chain.from_iterable(index[k] * round(weight * 2) for k, weight in w.items() if k in index))
    half_total = total * 2
    ranked = heapq.nlargest(limit, zip(acc.values(), map(neg_, acc), strict=True))  # ties: earlier unit
    return [(s / half_total, -i) for s, i in ranked]
