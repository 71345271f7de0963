"""Contradiction detection: which evidence units are checked against the claim, with which checks, in which
order (values: conflict_values.py; entities, polarity, antonyms, prefixes: conflict_terms.py; roles and
substitutions: conflict_order.py).
"""

from __future__ import annotations

from evalrun.grading.builtin.conflict_order import order_conflict, substitution
from evalrun.grading.builtin.conflict_terms import clause_conflict
from evalrun.grading.builtin.conflict_values import number_conflict, value_conflict
from evalrun.grading.builtin.coverage import weighted_coverage
from evalrun.grading.builtin.evidence import Evidence, Unit
from evalrun.grading.builtin.terms import Terms, sequence
from evalrun.grading.builtin.tokens import tokenize


def find_contradiction(claim: str, t: Terms, w: dict[str, float], total: float, ev: Evidence,
                       sent: Unit, ranked: list[tuple[float, int]] | None = None,
                       cseq: tuple[str, ...] | None = None) -> str | None:
    """A reason when the best-matching sentence or clause on the same subject disagrees with the claim."""
    reason = number_conflict(claim, t, w, total, ev, sent, ranked)
    if reason:
        return reason
    if cseq is None:
        cseq = sequence(tokenize(claim))
    clauses = _best_clauses(ev, ranked or [(0.0, sent.sentence)], w, total)
    for _, ci in clauses[:3]:
        clause = ev.clauses[ci]
        reason = clause_conflict(claim, t, w, total, clause, cseq)
        if reason:
            return reason
    for unit in [sent] + [ev.clauses[ci] for _, ci in clauses[:1]]:
        reason = order_conflict(claim, t, w, total, unit, cseq) or substitution(claim, t, w, total, unit, cseq)
        if reason:
            return reason
    return None


def unit_conflict(claim: str, t: Terms, w: dict[str, float], total: float, unit: Unit,
                  cseq: tuple[str, ...]) -> str | None:
    """A reason when `unit` itself disagrees with the claim (a value, a clause-level or an order conflict)."""
    return (value_conflict(claim, t, w, total, unit) or clause_conflict(claim, t, w, total, unit, cseq)
            or order_conflict(claim, t, w, total, unit, cseq))


def _best_clauses(ev: Evidence, ranked: list[tuple[float, int]], w: dict[str, float], total: float,
                  limit: int = 3) -> list[tuple[float, int]]:
    """(coverage, clause id) of the `limit` clauses of the best sentences covering most of the claim (a clause
    covers no more than its sentence, so the best clauses lie in the best sentences)."""
    scored = []
    for _, si in ranked:
        for ci in ev.sentences[si].clause_ids:
            cov = weighted_coverage(w, total, ev.clauses[ci].keys)
            if cov > 0:
                scored.append((-cov, ci))
    return [(-c, ci) for c, ci in sorted(scored)[:limit]]
