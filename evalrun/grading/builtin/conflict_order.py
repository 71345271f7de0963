"""Contradiction checks on word order and position: roles swapped around a shared verb ("Westport beat
Riverside" vs "Riverside beat Westport"), and one word of the claim replaced by another in the same place
("causes rickets" vs "causes scurvy").
"""

from __future__ import annotations

from evalrun.grading.builtin.coverage import LIGHT_KEYS, weighted_coverage
from evalrun.grading.builtin.evidence import Unit
from evalrun.grading.builtin.reasons import short, surface
from evalrun.grading.builtin.stemming import ANTONYMS, COMMON_KEYS
from evalrun.grading.builtin.terms import Terms
from evalrun.grading.builtin.tokens import tokenize

#: A word-for-word substitution ("causes rickets" where the evidence says "causes scurvy") needs the sentence to
#: cover this share of the claim's other keys.
SUBSTITUTION_MIN = 0.6
#: A role swap (the two parties of a verb in the opposite order) needs this coverage of the claim's keys.
ROLE_SWAP_MIN = 0.5


def order_conflict(claim: str, t: Terms, w: dict[str, float], total: float, unit: Unit,
                   cseq: tuple[str, ...]) -> str | None:
    """Who did what to whom: two parties of a shared verb in the opposite order ("Westport beat Riverside" where
    the evidence says "Riverside beat Westport"), or the claim's subject after the verb in the evidence while
    another name stands before it ("Gertrude murdered" vs "Claudius, who murdered ... Gertrude"). A passive on
    one side only ("X was built by Y" vs "Y built X") is not a swap."""
    ut = unit.terms
    if weighted_coverage(w, total, ut.keys) < ROLE_SWAP_MIN:
        return None
    eseq = unit.seq
    cpos, epos = _positions(cseq), _positions(eseq)
    shared = [k for k in cpos if k in epos and k[0] not in "#~" and k not in LIGHT_KEYS]
    for a_i, a in enumerate(shared):
        for b in shared[a_i + 1:]:
            if epos[b] >= epos[a] or not ((a in t.entities and b in t.entities) or (a in t.polar and b in t.polar)):
                continue
            for v in shared:
                if cpos[a] < cpos[v] < cpos[b] and epos[b] < epos[v] < epos[a] \
                        and ("~by" in cseq[cpos[v]:cpos[b]]) == ("~by" in eseq[epos[v]:epos[a]]):
                    return (f"the claim has {surface(claim, [a])[0]} before and {surface(claim, [b])[0]} after "
                            f"'{surface(claim, [v])[0]}', the evidence the other way round: "
                            f"\"{short(unit.text)}\"")
    subject = next((k for k in cseq if k[0] != "~"), None)
    if subject is None or subject not in t.entities or subject not in epos:
        return None
    verb = next((k for k in cseq[cpos[subject] + 1:] if k[0] != "~"), None)  # the word right after the subject
    if verb is None or verb not in shared or verb in t.entities or epos[verb] > epos[subject] or "~by" in eseq[epos[verb]:epos[subject]] \
            or "~by" in cseq[cpos[verb]:]:
        return None
    other = [k for k in eseq[:epos[verb]] if k in ut.entities and k not in t.keys]
    if other:
        return (f"the claim makes {surface(claim, [subject])[0]} the subject of '{surface(claim, [verb])[0]}' "
                f"where the evidence has {surface(unit.text, other[-1:])[0]}: \"{short(unit.text)}\"")
    return None


def _positions(seq: tuple[str, ...]) -> dict[str, int]:
    pos: dict[str, int] = {}
    for i, k in enumerate(seq):
        pos.setdefault(k, i)
    return pos


def substitution(claim: str, t: Terms, w: dict[str, float], total: float, unit: Unit,
                 cseq: tuple[str, ...]) -> str | None:
    """One content word of the claim replaced by another in the same place: a capitalised word where the evidence
    has a name between the same neighbours ("Osaka is the capital" vs "Tokyo is the capital"), or the claim's
    last word, after a matching word, where the evidence has another ("A long-term deficiency causes rickets"
    vs "causes scurvy"). Mid-sentence common words are left alone (paraphrase swaps verbs and nouns there:
    "spans" for "covers"). Frequent light words, numbers and months are left to the other checks."""
    ekeys = unit.keys
    plain = [k for k in cseq if k[0] != "~"]
    eplain = [k for k in unit.seq if k[0] != "~"]
    for i, x in enumerate(plain):
        if x in ekeys or x[0] == "#" or x in LIGHT_KEYS or x in t.months or x in t.polar or len(x) < 3:
            continue
        before = plain[i - 1] if i else None
        after = plain[i + 1] if i + 1 < len(plain) else None
        if (before is not None and before not in ekeys) or (after is not None and after not in ekeys):
            continue
        if weighted_coverage(w, total, ekeys, frozenset({x})) < SUBSTITUTION_MIN:
            continue
        starts = [j + 1 for j, k in enumerate(eplain) if k == before] if before is not None else [0]
        for j in starts:
            run: list[str] = []
            m = j
            while m < len(eplain) and eplain[m] not in t.keys and len(run) < 3:
                run.append(eplain[m])
                m += 1
            if after is None:
                run = run[:1]
            elif len(run) > 2 or m >= len(eplain) or eplain[m] != after:
                continue
            if not run or any(y[0] == "#" or y in LIGHT_KEYS or y in unit.terms.months or y in ANTONYMS for y in run):
                continue
            named = x in t.entities or (i == 0 and _capitalised(claim, x))
            if i == 0 and named and any(y in unit.terms.entities or _initial_name(unit, y, j) for y in run):
                return (f"the claim names '{surface(claim, [x])[0]}' where the evidence names "
                        f"'{' '.join(surface(unit.text, run))}': \"{short(unit.text)}\"")
            # the claim's last word after two words that also stand together in the evidence
            if after is None and not named and i >= 2 and j >= 2 and eplain[j - 2] == plain[i - 2] \
                    and not any(y in unit.terms.entities for y in run):
                return (f"the claim says '{surface(claim, [x])[0]}' where the evidence says "
                        f"'{' '.join(surface(unit.text, run))}': \"{short(unit.text)}\"")
    return None


def _initial_name(unit: Unit, key: str, j: int) -> bool:
    """`key` opens the unit capitalised and is no everyday word: a sentence-initial name ("Tokyo is ...")."""
    return j == 0 and key not in COMMON_KEYS and _capitalised(unit.text, key)


def _capitalised(text: str, key: str) -> bool:
    return any(tok.key == key and tok.capital for tok in tokenize(text))
