"""The lexical entailment scorer: does the evidence support, contradict, or not mention a claim?

How a claim is judged against evidence (a list of texts, e.g. a ground truth or context chunks):

1. **Coverage.** The claim's content keys (stems through the synonym table, numbers, months; named entities,
   numbers and months weigh `MATERIAL_WEIGHT`, other words 1) are looked up in the evidence sentences that
   share at least one key with it (an inverted index, so long contexts cost no quadratic work). Coverage is
   the weighted share of claim keys found in the best sentence plus the sentence that adds most to it.
2. **A sentence or clause that states the claim** (contains every one of its keys) and does not disagree with
   it (polarity, antonym, prefix, word order; for a sentence, in none of its clauses either) makes the claim
   supported: what other sentences about the same subject say cannot override it.
3. **Contradiction checks**, against the best-matching sentence / clause *on the same subject* (its
   coverage of the claim's remaining keys is at least `SAME_SUBJECT_MIN`):
   a number, year or ordinal of the claim is absent while the sentence has another of the same kind (checked
   per value, against the best sentence and the one most about the claim's other words, and only when no
   sentence that has the value matches the rest of the claim as well);
   a month or weekday differs; a named entity of the claim is absent while the clause names another
   (`ENTITY_SWAP_MIN`); the claim's polarity (count of negations) differs from the clause's (`NEGATION_MIN`);
   the claim uses a word whose antonym the clause uses ("rose" vs "fell").
4. **Unsupported** when coverage is below `SUPPORT_THRESHOLD`, or a named entity, number or month of the
   claim appears nowhere in the evidence (a material part of the claim is not backed).
5. Otherwise **supported**.

`support_score` is continuous in [0, 1]: the coverage, multiplied by `MISSING_MATERIAL_FACTOR` when material is
missing and by `CONTRADICTION_FACTOR` when contradicted. It orders claims for AUROC; the verdict uses the rules.

The parts: evidence.py (preparation), coverage.py (weights, coverage, ranking), contradiction.py and the
conflict_*.py checks; this module applies the rules and gives the verdict.
"""

from __future__ import annotations

from dataclasses import dataclass

from evalrun.grading.builtin.conflict_order import ROLE_SWAP_MIN, SUBSTITUTION_MIN
from evalrun.grading.builtin.conflict_terms import (
    ENTITY_SWAP_MIN,
    NEGATION_MIN,
    NEGATIVE_PREFIXES,
    clause_conflict,
    negative_base,
)
from evalrun.grading.builtin.contradiction import find_contradiction, unit_conflict
from evalrun.grading.builtin.coverage import (
    LIGHT_KEYS,
    LIGHT_WEIGHT,
    MATERIAL_WEIGHT,
    SAME_SUBJECT_MIN,
    best_units,
    claim_weights,
    weighted_coverage,
)
from evalrun.grading.builtin.evidence import Evidence, Unit, claim_terms, prepare
from evalrun.grading.builtin.reasons import short, surface
from evalrun.grading.builtin.terms import Terms, sequence
from evalrun.grading.builtin.text import clear_caches as _clear_text_caches
from evalrun.grading.builtin.tokens import tokenize
from evalrun.types import VerdictLabel

#: The scorer's API, and the named thresholds of its parts (defined in their modules, importable from here).
__all__ = [
    "ATTRIBUTION_MIN",
    "CONTRADICTION_FACTOR",
    "ENTITY_SWAP_MIN",
    "LIGHT_KEYS",
    "LIGHT_WEIGHT",
    "MATERIAL_WEIGHT",
    "MISSING_MATERIAL_FACTOR",
    "NEGATION_MIN",
    "NEGATIVE_PREFIXES",
    "ROLE_SWAP_MIN",
    "SAME_SUBJECT_MIN",
    "SUBSTITUTION_MIN",
    "SUPPORT_THRESHOLD",
    "Evidence",
    "Judgement",
    "attributes",
    "claim_terms",
    "clear_caches",
    "judge",
    "prepare",
    "support_score",
]


#: Minimum weighted coverage of the claim's keys for `supported`.
SUPPORT_THRESHOLD = 0.75
#: Score multiplier when a material part (entity, number, month) of the claim is nowhere in the evidence.
MISSING_MATERIAL_FACTOR = 0.5
#: Score multiplier when the claim is contradicted.
CONTRADICTION_FACTOR = 0.2
#: Attribution is lenient: a chunk is a source of a claim when it is not contradicted, contains every named
#: entity of the claim, and covers at least this share of its keys (or supports it outright).
ATTRIBUTION_MIN = 0.5


@dataclass(frozen=True)
class Judgement:
    """The scorer's decision about one claim against one evidence set."""

    verdict: VerdictLabel
    score: float
    coverage: float
    reason: str
    items: tuple[int, ...] = ()  # evidence texts the best sentences came from


def judge(claim: str, evidence: tuple[str, ...] | list[str]) -> Judgement:
    """Verdict, score and reason for one claim against the evidence texts."""
    ev = prepare(tuple(evidence))
    verbatim = _verbatim_unit(claim, ev)
    if verbatim is not None:  # the evidence says exactly this (also where words are not space-separated: CJK)
        return Judgement("supported", 1.0, 1.0, f"the evidence says it verbatim: \"{short(verbatim.text)}\"",
                         (verbatim.item,))
    t = claim_terms(claim, ev)
    if not t.keys:
        return Judgement("unsupported", 0.0, 0.0, "the claim has no content words to check")
    w = claim_weights(t)
    total = sum(w.values())
    ranked = best_units(ev.sentence_index, w, total)
    if not ranked:
        return Judgement("unsupported", 0.0, 0.0, "no evidence sentence shares a content word with the claim")
    b1 = ev.sentences[ranked[0][1]]
    covered = b1.keys & t.keys
    best2: Unit | None = None
    gain = 0.0
    for _, i in ranked[1:6]:
        extra = weighted_coverage(w, total, (ev.sentences[i].keys & t.keys) - covered)
        if extra > gain:
            gain, best2 = extra, ev.sentences[i]
    coverage = ranked[0][0] + gain
    items = tuple(sorted({b1.item} | ({best2.item} if best2 else set())))

    cseq = sequence(tokenize(claim)) if ranked[0][0] >= 1.0 - 1e-9 else None
    stated = _stating_unit(claim, t, w, total, ev, ranked, cseq) if cseq is not None else None
    if stated is not None:  # a sentence or clause says all of it: what other sentences say does not matter
        return Judgement("supported", 1.0, 1.0,
                         f"100% of the claim's key terms found in: \"{short(stated.text)}\"", (stated.item,))
    contradiction = find_contradiction(claim, t, w, total, ev, b1, ranked, cseq)
    missing = sorted(k for k in t.keys if w[k] > 1.0 and k not in ev.keys)
    if contradiction:
        score = coverage * CONTRADICTION_FACTOR
        return Judgement("contradicted", round(score, 6), coverage, contradiction, items)
    if missing:
        score = coverage * MISSING_MATERIAL_FACTOR
        return Judgement("unsupported", round(score, 6), coverage,
                         f"not in the evidence: {', '.join(surface(claim, missing))}", items)
    if coverage < SUPPORT_THRESHOLD:
        absent = sorted(k for k in t.keys if k not in ev.keys)
        why = f"only {coverage:.0%} of the claim's key terms are in the evidence"
        if absent:
            why += f" (missing: {', '.join(surface(claim, absent))})"
        return Judgement("unsupported", round(coverage, 6), coverage, why, items)
    return Judgement("supported", round(coverage, 6), coverage,
                     f"{coverage:.0%} of the claim's key terms found in: \"{short(b1.text)}\"", items)


def _plain(text: str) -> str:
    """`text` for a verbatim comparison: case folded, spaces collapsed, closing punctuation dropped."""
    return " ".join(text.casefold().split()).rstrip(" .!?;:\u3002\uff0e\uff01\uff1f\"'\u201d)")


def _verbatim_unit(claim: str, ev: Evidence) -> Unit | None:
    """An evidence sentence or clause that is the claim itself, word for word (a claim that repeats the
    evidence is supported, whatever the tokenizer makes of its script)."""
    plain = _plain(claim)
    if not plain:
        return None
    for unit in (*ev.sentences, *ev.clauses):
        if _plain(unit.text) == plain:
            return unit
    return None


def _stating_unit(claim: str, t: Terms, w: dict[str, float], total: float, ev: Evidence,
                  ranked: list[tuple[float, int]], cseq: tuple[str, ...]) -> Unit | None:
    """An evidence clause or sentence that contains every key of the claim and does not disagree with it (no
    negation, antonym, prefix or order conflict with that unit; for a sentence, with none of its clauses
    either), or None. Such a unit states the claim: a conflict with another sentence about the same subject
    ("Canberra is the capital of Australia. It was selected ... between Sydney and Melbourne.") cannot
    override it."""
    for cov, si in ranked:
        if cov < 1.0 - 1e-9:
            break  # best first: no later sentence has every key
        sent = ev.sentences[si]
        if not t.keys <= sent.keys:
            continue
        parts = [ev.clauses[ci] for ci in sent.clause_ids]
        for clause in parts:
            if t.keys <= clause.keys and not unit_conflict(claim, t, w, total, clause, cseq):
                return clause
        if len(parts) > 1 and not unit_conflict(claim, t, w, total, sent, cseq) \
                and not any(clause_conflict(claim, t, w, total, c, cseq) for c in parts):
            return sent
    return None


def clear_caches() -> None:
    """Forget every memoised result, evidence included (for cold-start benchmarks)."""
    prepare.cache_clear()
    negative_base.cache_clear()
    _clear_text_caches()


def support_score(claim: str, evidence: str | list[str] | tuple[str, ...]) -> float:
    """A continuous support score in [0, 1] for one claim (higher = better supported)."""
    ev = (evidence,) if isinstance(evidence, str) else tuple(evidence)
    return judge(claim, ev).score


def attributes(claim: str, chunk: str) -> bool:
    """Lenient attribution: is `chunk` a plausible source of `claim`? (see ATTRIBUTION_MIN)."""
    j = judge(claim, (chunk,))
    if j.verdict == "supported":
        return True
    if j.verdict == "contradicted":
        return False
    ev = prepare((chunk,))
    t = claim_terms(claim, ev)
    return bool(t.keys) and t.entities <= ev.keys and j.coverage >= ATTRIBUTION_MIN
