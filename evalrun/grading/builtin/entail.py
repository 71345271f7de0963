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
"""

from __future__ import annotations

import heapq
import math
import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from itertools import chain
from operator import neg as neg_

from evalrun.grading.builtin.lexicon import LIGHT_WORDS
from evalrun.grading.builtin.segment import resolved_sentences
from evalrun.grading.builtin.text import (
    ANTONYMS,
    Terms,
    Token,
    merge_terms,
    sequence,
    stem,
    synonym_key,
    terms_and_sequence,
    terms_of,
    tokenize,
)
from evalrun.grading.builtin.text import clear_caches as _clear_text_caches
from evalrun.types import VerdictLabel

#: Minimum weighted coverage of the claim's keys for `supported`.
SUPPORT_THRESHOLD = 0.75
#: Weight of a named entity, number or month in the coverage (other content words weigh 1).
MATERIAL_WEIGHT = 2.0
#: A clause/sentence is "on the same subject" as the claim when it covers this share of the claim's other keys.
SAME_SUBJECT_MIN = 0.5
#: An entity swap needs this coverage of the claim's non-entity keys by the clause.
ENTITY_SWAP_MIN = 0.6
#: A polarity (negation) mismatch needs this coverage of the claim's keys by the clause.
NEGATION_MIN = 0.6
#: A word-for-word substitution ("causes rickets" where the evidence says "causes scurvy") needs the sentence to
#: cover this share of the claim's other keys.
SUBSTITUTION_MIN = 0.6
#: A role swap (the two parties of a verb in the opposite order) needs this coverage of the claim's keys.
ROLE_SWAP_MIN = 0.5
#: Prefixes that negate the word they are added to: a claim with "incomplete" where the matching evidence has
#: "complete" (or the other way round) is contradicted, like an antonym.
NEGATIVE_PREFIXES = ("non", "un", "in", "im", "il", "ir", "dis")
_NEGATIVE_INITIALS = frozenset(p[0] for p in NEGATIVE_PREFIXES)
#: Weight of a frequent, low-information word ("take", "place", "make": lexicon.LIGHT_WORDS).
LIGHT_WEIGHT = 0.5
#: Score multiplier when a material part (entity, number, month) of the claim is nowhere in the evidence.
MISSING_MATERIAL_FACTOR = 0.5
#: Score multiplier when the claim is contradicted.
CONTRADICTION_FACTOR = 0.2
#: Attribution is lenient: a chunk is a source of a claim when it is not contradicted, contains every named
#: entity of the claim, and covers at least this share of its keys (or supports it outright).
ATTRIBUTION_MIN = 0.5

_CLAUSE_SEPARATORS = (";", ", and ", ", but ", " but ", ", while ", " while ", ", whereas ", " whereas ",
                      ", although ", " although ", ", who ", ", which ", " because ", ", so ", ": ")
_RELATIVE = frozenset({", who ", ", which "})
_CLAUSE_RE = re.compile("(" + "|".join(re.escape(s) for s in _CLAUSE_SEPARATORS) + ")")
_CANDIDATES = 6  # evidence units examined closely per claim


LIGHT_KEYS = frozenset(stem(w) for w in LIGHT_WORDS)


class _Unit:
    """One evidence sentence or clause (a sentence's merged terms are built on first use)."""

    __slots__ = ("text", "parts", "item", "sentence", "seq", "clause_ids", "keys", "_terms")

    def __init__(self, text: str, parts: tuple[Terms, ...], item: int, sentence: int,
                 seq: tuple[str, ...] = (), clause_ids: tuple[int, ...] = ()) -> None:
        self.text = text
        self.parts = parts  # the terms of its clauses (one for a clause)
        self.item = item  # index of the evidence text it came from
        self.sentence = sentence  # index of its sentence
        self.seq = seq  # content keys in reading order, with "~by" / "~not" markers (text.sequence)
        self.clause_ids = clause_ids  # a sentence's clauses (indices into Evidence.clauses)
        self.keys: frozenset[str] = parts[0].keys if len(parts) == 1 else frozenset().union(*(p.keys for p in parts))
        self._terms: Terms | None = parts[0] if len(parts) == 1 else None

    @property
    def terms(self) -> Terms:
        if self._terms is None:
            self._terms = merge_terms(list(self.parts))
        return self._terms


@dataclass(frozen=True)
class Evidence:
    """Evidence texts, split and analysed once (cached by content)."""

    sentences: tuple[_Unit, ...]
    clauses: tuple[_Unit, ...]
    keys: frozenset[str]
    entities: frozenset[str]
    sentence_index: dict[str, tuple[int, ...]]


@dataclass(frozen=True)
class Judgement:
    """The scorer's decision about one claim against one evidence set."""

    verdict: VerdictLabel
    score: float
    coverage: float
    reason: str
    items: tuple[int, ...] = ()  # evidence texts the best sentences came from


def _split_clauses(text: str) -> list[str]:
    """Clauses of an evidence sentence; a relative clause (", who ...") gets its antecedent as subject."""
    pieces = _CLAUSE_RE.split(text)
    out = [pieces[0]] if pieces[0].strip() else []
    for k in range(1, len(pieces), 2):
        sep, piece = pieces[k], pieces[k + 1]
        if not piece.strip():
            continue
        if sep in _RELATIVE and pieces[k - 1].strip():
            piece = f"{_antecedent(pieces[k - 1])} {piece}"
        out.append(piece)
    return out or [text]


def _antecedent(left: str) -> str:
    """The noun phrase a relative clause refers to: the capitalised run (or last two words) ending `left`."""
    words = left.split()
    run: list[str] = []
    for w in reversed(words):
        if w[:1].isupper():
            run.insert(0, w)
        else:
            break
    return " ".join(run) if run else " ".join(words[-2:])


def _index(units: list[_Unit]) -> dict[str, tuple[int, ...]]:
    idx: dict[str, list[int]] = {}
    for i, u in enumerate(units):
        for k in u.keys:
            idx.setdefault(k, []).append(i)
    return {k: tuple(v) for k, v in idx.items()}


@lru_cache(maxsize=256)
def prepare(evidence: tuple[str, ...]) -> Evidence:
    """Split and analyse evidence texts (cached: the same evidence is analysed once per process)."""
    raw_sents: list[tuple[str, int, list[tuple[str, tuple[Token, ...]]]]] = []
    known: set[str] = set()
    for item, text in enumerate(evidence):
        for s in resolved_sentences(text):
            pieces = [(c, tokenize(c)) for c in _split_clauses(s)]  # a sentence is tokenised once, by clause
            raw_sents.append((s, item, pieces))
            for ci, (_, toks) in enumerate(pieces):
                known.update(t.key for t in toks if t.capital and t.kind == "word" and (ci or not t.initial))
    known_f = frozenset(known)
    sents: list[_Unit] = []
    clauses: list[_Unit] = []
    keys: set[str] = set()
    ents: set[str] = set()
    for si, (s, item, pieces) in enumerate(raw_sents):
        first = len(clauses)
        parts = []
        seqs = []
        for c, toks in pieces:
            t, q = terms_and_sequence(toks, known_f)
            parts.append(t)
            seqs.append(q)
            keys.update(t.keys)
            ents.update(t.entities)
            clauses.append(_Unit(c, (t,), item, si, q))
        sents.append(_Unit(s, tuple(parts), item, si, seqs[0] if len(seqs) == 1 else tuple(k for q in seqs for k in q),
                           tuple(range(first, len(clauses)))))
    return Evidence(tuple(sents), tuple(clauses), frozenset(keys), frozenset(ents), _index(sents))


def claim_terms(claim: str, ev: Evidence) -> Terms:
    """The claim's terms; a capitalised first word is an entity when the evidence knows it as one."""
    return terms_of(tokenize(claim), ev.entities)


def _weights(t: Terms) -> dict[str, float]:
    return {k: (MATERIAL_WEIGHT if (k in t.entities or k.startswith("#") or k in t.months)
                else LIGHT_WEIGHT if k in LIGHT_KEYS else 1.0)
            for k in t.keys}


def _coverage(w: dict[str, float], total: float, keys: frozenset[str], exclude: frozenset[str] = frozenset(),
              ) -> float:
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


def _best(index: dict[str, tuple[int, ...]], w: dict[str, float], total: float,
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


def judge(claim: str, evidence: tuple[str, ...] | list[str]) -> Judgement:
    """Verdict, score and reason for one claim against the evidence texts."""
    ev = prepare(tuple(evidence))
    t = claim_terms(claim, ev)
    if not t.keys:
        return Judgement("unsupported", 0.0, 0.0, "the claim has no content words to check")
    w = _weights(t)
    total = sum(w.values())
    ranked = _best(ev.sentence_index, w, total)
    if not ranked:
        return Judgement("unsupported", 0.0, 0.0, "no evidence sentence shares a content word with the claim")
    b1 = ev.sentences[ranked[0][1]]
    covered = b1.keys & t.keys
    best2: _Unit | None = None
    gain = 0.0
    for _, i in ranked[1:6]:
        extra = _coverage(w, total, (ev.sentences[i].keys & t.keys) - covered)
        if extra > gain:
            gain, best2 = extra, ev.sentences[i]
    coverage = ranked[0][0] + gain
    items = tuple(sorted({b1.item} | ({best2.item} if best2 else set())))

    cseq = sequence(tokenize(claim)) if ranked[0][0] >= 1.0 - 1e-9 else None
    stated = _stating_unit(claim, t, w, total, ev, ranked, cseq) if cseq is not None else None
    if stated is not None:  # a sentence or clause says all of it: what other sentences say does not matter
        return Judgement("supported", 1.0, 1.0,
                         f"100% of the claim's key terms found in: \"{_short(stated.text)}\"", (stated.item,))
    contradiction = _contradiction(claim, t, w, total, ev, b1, ranked, cseq)
    missing = sorted(k for k in t.keys if w[k] > 1.0 and k not in ev.keys)
    if contradiction:
        score = coverage * CONTRADICTION_FACTOR
        return Judgement("contradicted", round(score, 6), coverage, contradiction, items)
    if missing:
        score = coverage * MISSING_MATERIAL_FACTOR
        return Judgement("unsupported", round(score, 6), coverage,
                         f"not in the evidence: {', '.join(_surface(claim, missing))}", items)
    if coverage < SUPPORT_THRESHOLD:
        absent = sorted(k for k in t.keys if k not in ev.keys)
        why = f"only {coverage:.0%} of the claim's key terms are in the evidence"
        if absent:
            why += f" (missing: {', '.join(_surface(claim, absent))})"
        return Judgement("unsupported", round(coverage, 6), coverage, why, items)
    return Judgement("supported", round(coverage, 6), coverage,
                     f"{coverage:.0%} of the claim's key terms found in: \"{_short(b1.text)}\"", items)


def _stating_unit(claim: str, t: Terms, w: dict[str, float], total: float, ev: Evidence,
                  ranked: list[tuple[float, int]], cseq: tuple[str, ...]) -> _Unit | None:
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
            if t.keys <= clause.keys and not _unit_conflict(claim, t, w, total, clause, cseq):
                return clause
        if len(parts) > 1 and not _unit_conflict(claim, t, w, total, sent, cseq) \
                and not any(_clause_conflict(claim, t, w, total, c, cseq) for c in parts):
            return sent
    return None


def _unit_conflict(claim: str, t: Terms, w: dict[str, float], total: float, unit: _Unit,
                   cseq: tuple[str, ...]) -> str | None:
    return (_value_conflict(claim, t, w, total, unit) or _clause_conflict(claim, t, w, total, unit, cseq)
            or _order_conflict(claim, t, w, total, unit, cseq))


def _contradiction(claim: str, t: Terms, w: dict[str, float], total: float, ev: Evidence,
                   sent: _Unit, ranked: list[tuple[float, int]] | None = None,
                   cseq: tuple[str, ...] | None = None) -> str | None:
    """A reason when the best-matching sentence or clause on the same subject disagrees with the claim."""
    reason = _number_conflict(claim, t, w, total, ev, sent, ranked)
    if reason:
        return reason
    if cseq is None:
        cseq = sequence(tokenize(claim))
    clauses = _best_clauses(ev, ranked or [(0.0, sent.sentence)], w, total)
    for _, ci in clauses[:3]:
        clause = ev.clauses[ci]
        reason = _clause_conflict(claim, t, w, total, clause, cseq)
        if reason:
            return reason
    for unit in [sent] + [ev.clauses[ci] for _, ci in clauses[:1]]:
        reason = _order_conflict(claim, t, w, total, unit, cseq) or _substitution(claim, t, w, total, unit, cseq)
        if reason:
            return reason
    return None


def _best_clauses(ev: Evidence, ranked: list[tuple[float, int]], w: dict[str, float], total: float,
                  limit: int = 3) -> list[tuple[float, int]]:
    """(coverage, clause id) of the `limit` clauses of the best sentences covering most of the claim (a clause
    covers no more than its sentence, so the best clauses lie in the best sentences)."""
    scored = []
    for _, si in ranked:
        for ci in ev.sentences[si].clause_ids:
            cov = _coverage(w, total, ev.clauses[ci].keys)
            if cov > 0:
                scored.append((-cov, ci))
    return [(-c, ci) for c, ci in sorted(scored)[:limit]]


def _number_conflict(claim: str, t: Terms, w: dict[str, float], total: float, ev: Evidence, sent: _Unit,
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
        units.insert(0, (_coverage(w, total, sent.keys) * total, sent))
    for v in values:
        # weight of the claim's other keys found in each sentence (the same denominator for all: compared as is)
        covs = [(found - w[v] if v in u.keys else found, -u.sentence, u) for found, u in units]
        carried = max((c for c, _, u in covs if v in u.keys), default=-1.0)
        topic = max(covs, key=lambda x: x[:2])
        mine = next(x for x in covs if x[2] is sent)
        for found, _, unit in (mine, topic) if topic is not mine else (mine,):
            if v in unit.keys or found <= carried + 1e-9:
                continue
            reason = _value_conflict(claim, t, w, total, unit, v)
            if reason:
                return reason
    return None


def _value_conflict(claim: str, t: Terms, w: dict[str, float], total: float, sent: _Unit,
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
        if others and _coverage(w, total, st.keys, conflicting) >= SAME_SUBJECT_MIN:
            nearest = min(others, key=lambda o: (_distance(value, o[1:]), o))
            return (f"the claim says {_surface(claim, ['#' + value])[0]} where the evidence says "
                    f"{_surface(sent.text, [nearest])[0]}: \"{_short(sent.text)}\"")
    for month in sorted(t.months - st.months):
        if only is not None and only != month:
            continue
        others = sorted(st.months - t.months)
        if others and _coverage(w, total, st.keys, frozenset(t.months)) >= SAME_SUBJECT_MIN:
            return (f"the claim says {_surface(claim, [month])[0]} where the evidence says "
                    f"{', '.join(_surface(sent.text, others))}: \"{_short(sent.text)}\"")
    return None


def _positions(seq: tuple[str, ...]) -> dict[str, int]:
    pos: dict[str, int] = {}
    for i, k in enumerate(seq):
        pos.setdefault(k, i)
    return pos


def _order_conflict(claim: str, t: Terms, w: dict[str, float], total: float, unit: _Unit,
                    cseq: tuple[str, ...]) -> str | None:
    """Who did what to whom: two parties of a shared verb in the opposite order ("Westport beat Riverside" where
    the evidence says "Riverside beat Westport"), or the claim's subject after the verb in the evidence while
    another name stands before it ("Gertrude murdered" vs "Claudius, who murdered ... Gertrude"). A passive on
    one side only ("X was built by Y" vs "Y built X") is not a swap."""
    ut = unit.terms
    if _coverage(w, total, ut.keys) < ROLE_SWAP_MIN:
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
                    return (f"the claim has {_surface(claim, [a])[0]} before and {_surface(claim, [b])[0]} after "
                            f"'{_surface(claim, [v])[0]}', the evidence the other way round: "
                            f"\"{_short(unit.text)}\"")
    subject = next((k for k in cseq if k[0] != "~"), None)
    if subject is None or subject not in t.entities or subject not in epos:
        return None
    verb = next((k for k in cseq[cpos[subject] + 1:] if k[0] != "~"), None)  # the word right after the subject
    if verb is None or verb not in shared or verb in t.entities or epos[verb] > epos[subject] or "~by" in eseq[epos[verb]:epos[subject]] \
            or "~by" in cseq[cpos[verb]:]:
        return None
    other = [k for k in eseq[:epos[verb]] if k in ut.entities and k not in t.keys]
    if other:
        return (f"the claim makes {_surface(claim, [subject])[0]} the subject of '{_surface(claim, [verb])[0]}' "
                f"where the evidence has {_surface(unit.text, other[-1:])[0]}: \"{_short(unit.text)}\"")
    return None


def _substitution(claim: str, t: Terms, w: dict[str, float], total: float, unit: _Unit,
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
        if _coverage(w, total, ekeys, frozenset({x})) < SUBSTITUTION_MIN:
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
            if i == 0 and named and any(y in unit.terms.entities for y in run):
                return (f"the claim names '{_surface(claim, [x])[0]}' where the evidence names "
                        f"'{' '.join(_surface(unit.text, run))}': \"{_short(unit.text)}\"")
            # the claim's last word after two words that also stand together in the evidence
            if after is None and not named and i >= 2 and j >= 2 and eplain[j - 2] == plain[i - 2] \
                    and not any(y in unit.terms.entities for y in run):
                return (f"the claim says '{_surface(claim, [x])[0]}' where the evidence says "
                        f"'{' '.join(_surface(unit.text, run))}': \"{_short(unit.text)}\"")
    return None


def _capitalised(text: str, key: str) -> bool:
    return any(tok.key == key and tok.capital for tok in tokenize(text))


def _negated_heads(seq: tuple[str, ...]) -> list[str]:
    """The content key right after each negation ("did not *win*", "no *pilots*"): what is negated."""
    return [seq[i + 1] for i, k in enumerate(seq[:-1]) if k == "~not" and seq[i + 1][0] != "~"]


def _clause_conflict(claim: str, t: Terms, w: dict[str, float], total: float, clause: _Unit,
                     cseq: tuple[str, ...] = ()) -> str | None:
    ct = clause.terms
    absent_ents = t.entities - ct.keys
    new_ents = ct.entities - t.keys
    if absent_ents and new_ents:
        new_ents -= _names_sharing(clause.text, t.keys)
    if absent_ents and new_ents and _coverage(w, total, ct.keys, frozenset(t.entities)) >= ENTITY_SWAP_MIN:
        return (f"the claim names {', '.join(_surface(claim, sorted(absent_ents)))} where the evidence names "
                f"{', '.join(_surface(clause.text, sorted(new_ents)))}: \"{_short(clause.text)}\"")
    cov = _coverage(w, total, ct.keys)
    if (t.negations % 2) != (ct.negations % 2) and cov >= NEGATION_MIN and _same_scope(t, ct, cseq, clause.seq):
        side = "negates" if t.negations % 2 else "affirms"
        return f"the claim {side} what the evidence states the other way: \"{_short(clause.text)}\""
    for p in sorted(t.polar - ct.keys):
        opposite = (ANTONYMS[p] & ct.keys) - t.keys
        if opposite and _coverage(w, total, ct.keys, frozenset({p})) >= SAME_SUBJECT_MIN:
            said = _surface(claim, [p])[0]
            other = _surface(clause.text, [sorted(opposite)[0]])[0]
            return f"the claim says '{said}' where the evidence says '{other}': \"{_short(clause.text)}\""
    for mine, theirs, text_a, text_b in ((t.keys, ct.keys, claim, clause.text), (ct.keys, t.keys, clause.text, claim)):
        for k in sorted(k for k in mine - theirs if k[0] in _NEGATIVE_INITIALS):
            base = _negative_base(k)
            if base and base in theirs and base not in mine \
                    and _coverage(w, total, ct.keys, frozenset({k, base})) >= SAME_SUBJECT_MIN:
                said, other = (k, base) if text_a is claim else (base, k)
                return (f"the claim says '{_surface(claim, [said])[0]}' where the evidence says "
                        f"'{_surface(clause.text, [other])[0]}': \"{_short(text_b if text_a is claim else text_a)}\"")
    return None


@lru_cache(maxsize=65536)
def _negative_base(key: str) -> str | None:
    """The word a negative prefix was added to ("unable" -> "able", "incomplete" -> "complete"), or None."""
    for prefix in NEGATIVE_PREFIXES:
        if key.startswith(prefix) and len(key) - len(prefix) >= (3 if prefix in ("un", "non") else 4):
            return synonym_key(key[len(prefix):])
    return None


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


def _same_scope(t: Terms, ct: Terms, cseq: tuple[str, ...], eseq: tuple[str, ...]) -> bool:
    """A polarity mismatch counts only when what is negated on one side is mentioned on the other ("was not
    backward compatible" says nothing about "broke compatibility"; "have not been replicated" nothing about
    "is too slow")."""
    heads, other = (_negated_heads(cseq), ct.keys) if t.negations > ct.negations else (_negated_heads(eseq), t.keys)
    return not heads or any(h in other for h in heads)


def _distance(a: str, b: str) -> float:
    """How far apart two canonical numbers are, on a log scale (to name the evidence's nearest number)."""
    x, y = abs(float(a.lstrip("o"))) + 1e-9, abs(float(b.lstrip("o"))) + 1e-9
    return abs(math.log(x / y))


def _surface(text: str, keys: list[str]) -> list[str]:
    """The words of `text` as written for the given keys (for reasons)."""
    forms: dict[str, str] = {}
    for tok in tokenize(text):
        k = ("#" + tok.key) if tok.kind in ("num", "year", "ord") else tok.key
        forms.setdefault(k, tok.text)
    return [forms.get(k, k.lstrip("#")) for k in keys]


def _short(text: str, limit: int = 90) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def clear_caches() -> None:
    """Forget every memoised result, evidence included (for cold-start benchmarks)."""
    prepare.cache_clear()
    _negative_base.cache_clear()
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
