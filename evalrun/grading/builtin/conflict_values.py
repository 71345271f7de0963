"""Contradiction check on values: a number, year, ordinal, month or weekday of the claim that the evidence on
the same subject states differently ("in 1991" vs "in 2008", "in May" vs "in June").
"""

from __future__ import annotations

import math

from evalrun.grading.builtin.coverage import SAME_SUBJECT_MIN, weighted_coverage
from evalrun.grading.builtin.evidence import Evidence, Unit
from evalrun.grading.builtin.reasons import short, surface
from evalrun.grading.builtin.terms import Terms


def number_conflict(claim: str, t: Terms, w: dict[str, float], total: float, ev: Evidence, sent: Unit,
                    ranked: list[tuple[float, int]] | None) -> str | None:
    """A number, year, ordinal or month of the claim that the sentence best matching the rest of the claim
    disagrees with. For each value v, checked against the best-matching sentence and against the sentence most
    about the claim's other words (the coverage without v: "14 million live in the metropolitan area" vs "14
    million in the city proper. The metropolitan area ... 37 million"), and only when no sentence that carries
    v matches the rest of the claim as well ("Python 3.0 was released in 2008" vs "Python ... first released
    in 1991. Python 3.0 came out in 2008": the second sentence is about Python 3.0 and says 2008)."""
    values = sorted("#" + v for _, v in t.numbers) + sorted(t.months)
    if not values:
        return None
    units = [(cov * total, ev.sentences[i]) for cov, i in ranked or ()]
    if not any(u is sent for _, u in units):
        units.insert(0, (weighted_coverage(w, total, sent.keys) * total, sent))
    for v in values:
        # weight of the claim's other keys found in each sentence (the same denominator for all: compared as is)
        covs = [(found - w[v] if v in u.keys else found, -u.sentence, u) for found, u in units]
        carried = max((c for c, _, u in covs if v in u.keys), default=-1.0)
        topic = max(covs, key=lambda x: x[:2])
        mine = next(x for x in covs if x[2] is sent)
        for found, _, unit in (mine, topic) if topic is not mine else (mine,):
            if v in unit.keys or found <= carried + 1e-9:
                continue
            reason = value_conflict(claim, t, w, total, unit, v)
            if reason:
                return reason
    return None


def value_conflict(claim: str, t: Terms, w: dict[str, float], total: float, sent: Unit,
                   only: str | None = None) -> str | None:
    """A number, year, ordinal or month of the claim (or only the value `only`: "#1991", "may") absent from
    `sent` while it has another of the same kind (and covers the claim's other words). A proportion ("half",
    0.5) and a count are not the same quantity."""
    st = sent.terms
    for kind, value in sorted(t.numbers):
        if "#" + value in st.keys or (only is not None and only != "#" + value):
            continue
        small = float(value.lstrip("o")) < 1
        others = sorted("#" + v for k, v in st.numbers if k == kind and ("#" + v) not in t.keys
                        and (float(v.lstrip("o")) < 1) == small)
        conflicting = frozenset("#" + v for _, v in t.numbers if "#" + v not in st.keys)
        if others and weighted_coverage(w, total, st.keys, conflicting) >= SAME_SUBJECT_MIN:
            nearest = min(others, key=lambda o: (_distance(value, o[1:]), o))
            return (f"the claim says {surface(claim, ['#' + value])[0]} where the evidence says "
                    f"{surface(sent.text, [nearest])[0]}: \"{short(sent.text)}\"")
    for month in sorted(t.months - st.months):
        if only is not None and only != month:
            continue
        others = sorted(st.months - t.months)
        if others and weighted_coverage(w, total, st.keys, frozenset(t.months)) >= SAME_SUBJECT_MIN:
            return (f"the claim says {surface(claim, [month])[0]} where the evidence says "
                    f"{', '.join(surface(sent.text, others))}: \"{short(sent.text)}\"")
    return None


def _distance(a: str, b: str) -> float:
    """How far apart two canonical numbers are, on a log scale (to name the evidence's nearest number)."""
    x, y = abs(float(a.lstrip("o"))) + 1e-9, abs(float(b.lstrip("o"))) + 1e-9
    return abs(math.log(x / y))
