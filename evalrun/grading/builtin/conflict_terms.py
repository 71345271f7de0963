"""Contradiction checks within a clause: a named entity swapped for another, the opposite polarity (negation),
an antonym ("rose" vs "fell"), or a negative prefix ("complete" vs "incomplete").
"""

from __future__ import annotations

from functools import lru_cache

from evalrun.grading.builtin.coverage import SAME_SUBJECT_MIN, weighted_coverage
from evalrun.grading.builtin.evidence import Unit
from evalrun.grading.builtin.reasons import short, surface
from evalrun.grading.builtin.stemming import ANTONYMS, synonym_key
from evalrun.grading.builtin.terms import Terms
from evalrun.grading.builtin.tokens import Token, tokenize

#: An entity swap needs this coverage of the claim's non-entity keys by the clause.
ENTITY_SWAP_MIN = 0.6
#: A polarity (negation) mismatch needs this coverage of the claim's keys by the clause.
NEGATION_MIN = 0.6
#: Prefixes that negate the word they are added to: a claim with "incomplete" where the matching evidence has
#: "complete" (or the other way round) is contradicted, like an antonym.
NEGATIVE_PREFIXES = ("non", "un", "in", "im", "il", "ir", "dis")
_NEGATIVE_INITIALS = frozenset(p[0] for p in NEGATIVE_PREFIXES)


def clause_conflict(claim: str, t: Terms, w: dict[str, float], total: float, clause: Unit,
                    cseq: tuple[str, ...] = ()) -> str | None:
    """A reason when `clause` names another entity, has the other polarity, an antonym or a negated word."""
    ct = clause.terms
    absent_ents = t.entities - ct.keys
    new_ents = ct.entities - t.keys
    if absent_ents and new_ents:
        new_ents -= _names_sharing(clause.text, t.keys)
    if absent_ents and new_ents and weighted_coverage(w, total, ct.keys, frozenset(t.entities)) >= ENTITY_SWAP_MIN:
        return (f"the claim names {', '.join(surface(claim, sorted(absent_ents)))} where the evidence names "
                f"{', '.join(surface(clause.text, sorted(new_ents)))}: \"{short(clause.text)}\"")
    cov = weighted_coverage(w, total, ct.keys)
    if (t.negations % 2) != (ct.negations % 2) and cov >= NEGATION_MIN and _same_scope(t, ct, cseq, clause.seq):
        side = "negates" if t.negations % 2 else "affirms"
        return f"the claim {side} what the evidence states the other way: \"{short(clause.text)}\""
    for p in sorted(t.polar - ct.keys):
        opposite = (ANTONYMS[p] & ct.keys) - t.keys
        if opposite and weighted_coverage(w, total, ct.keys, frozenset({p})) >= SAME_SUBJECT_MIN:
            said = surface(claim, [p])[0]
            other = surface(clause.text, [sorted(opposite)[0]])[0]
            return f"the claim says '{said}' where the evidence says '{other}': \"{short(clause.text)}\""
    for mine, theirs, text_a, text_b in ((t.keys, ct.keys, claim, clause.text), (ct.keys, t.keys, clause.text, claim)):
        for k in sorted(k for k in mine - theirs if k[0] in _NEGATIVE_INITIALS):
            base = negative_base(k)
            if base and base in theirs and base not in mine \
                    and weighted_coverage(w, total, ct.keys, frozenset({k, base})) >= SAME_SUBJECT_MIN:
                said, other = (k, base) if text_a is claim else (base, k)
                return (f"the claim says '{surface(claim, [said])[0]}' where the evidence says "
                        f"'{surface(clause.text, [other])[0]}': \"{short(text_b if text_a is claim else text_a)}\"")
    return None


def _negated_heads(seq: tuple[str, ...]) -> list[str]:
    """The content key right after each negation ("did not *win*", "no *pilots*"): what is negated."""
    return [seq[i + 1] for i, k in enumerate(seq[:-1]) if k == "~not" and seq[i + 1][0] != "~"]


def _same_scope(t: Terms, ct: Terms, cseq: tuple[str, ...], eseq: tuple[str, ...]) -> bool:
    """A polarity mismatch counts only when what is negated on one side is mentioned on the other ("was not
    backward compatible" says nothing about "broke compatibility"; "have not been replicated" nothing about
    "is too slow")."""
    heads, other = (_negated_heads(cseq), ct.keys) if t.negations > ct.negations else (_negated_heads(eseq), t.keys)
    return not heads or any(h in other for h in heads)


def _names_sharing(text: str, keys: frozenset[str]) -> frozenset[str]:
    """Keys of the multi-word names of `text` that share a word with `keys` ("Pacific Ocean" when the claim says
    "the Pacific"): the rest of a name the claim already uses is not another entity."""
    out: set[str] = set()
    run: list[str] = []
    for tok in (*tokenize(text), Token("", "", "stop")):
        if tok.kind == "word" and tok.capital:
            run.append(tok.key)
            continue
        if len(run) > 1 and any(k in keys for k in run):
            out.update(run)
        run = []
    return frozenset(out)


@lru_cache(maxsize=65536)
def negative_base(key: str) -> str | None:
    """The word a negative prefix was added to ("unable" -> "able", "incomplete" -> "complete"), or None."""
    for prefix in NEGATIVE_PREFIXES:
        if key.startswith(prefix) and len(key) - len(prefix) >= (3 if prefix in ("un", "non") else 4):
            return synonym_key(key[len(prefix):])
    return None
