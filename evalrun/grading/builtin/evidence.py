"""Evidence preparation for the entailment scorer: sentences (pronouns resolved) and their clauses (a relative
clause gets its antecedent as subject), analysed into `Terms` and reading-order keys, indexed by key. Cached by
content."""

from __future__ import annotations

import heapq
import re
from dataclasses import dataclass, replace
from functools import lru_cache
from itertools import takewhile

from evalrun.grading.builtin.lexicon import COMMON_KEYS
from evalrun.grading.builtin.segment import resolved_sentences
from evalrun.grading.builtin.terms import Terms, Token, merge_terms, sequence, terms_of, tokenize

_CLAUSE_SEPARATORS = (";", ", and ", ", but ", " but ", ", while ", " while ", ", whereas ", " whereas ",
                      ", although ", " although ", ", who ", ", which ", " because ", ", so ", ": ")
_RELATIVE = frozenset({", who ", ", which "})
_CLAUSE_RE = re.compile("(" + "|".join(re.escape(s) for s in _CLAUSE_SEPARATORS) + ")")


@dataclass(frozen=True)
class Unit:
    """One evidence sentence or clause."""

    text: str
    terms: Terms  # a sentence's: merged from its clauses'
    item: int  # index of the evidence text it came from
    seq: tuple[str, ...] = ()  # content keys in reading order, with "~by" / "~not" markers (terms.sequence)
    clause_ids: tuple[int, ...] = ()  # a sentence's clauses (indices into Evidence.clauses)

    @property
    def keys(self) -> frozenset[str]:
        return self.terms.keys


@dataclass(frozen=True)
class Evidence:
    """Evidence texts, split and analysed once (cached by content)."""

    sentences: tuple[Unit, ...]
    clauses: tuple[Unit, ...]
    keys: frozenset[str]
    entities: frozenset[str]
    sentence_index: dict[str, tuple[int, ...]]


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
    run = list(takewhile(lambda w: w[:1].isupper(), reversed(words)))[::-1]
    return " ".join(run) if run else " ".join(words[-2:])


def _index(units: list[Unit]) -> dict[str, tuple[int, ...]]:
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
    sents: list[Unit] = []
    clauses: list[Unit] = []
    for s, item, pieces in raw_sents:
        first = len(clauses)
        clauses.extend(Unit(c, terms_of(toks, known_f), item, sequence(toks)) for c, toks in pieces)
        own = clauses[first:]
        terms = own[0].terms if len(own) == 1 else merge_terms([u.terms for u in own])
        sents.append(Unit(s, terms, item, tuple(k for u in own for k in u.seq), tuple(range(first, len(clauses)))))
    keys = frozenset().union(*(u.keys for u in clauses))
    return Evidence(tuple(sents), tuple(clauses), keys, frozenset().union(*(u.terms.entities for u in clauses)),
                    _index(sents))


def claim_terms(claim: str, ev: Evidence) -> Terms:
    """The claim's terms; a capitalised first word is an entity when the evidence knows it as one, or when it
    is no everyday word of the lexicon and the evidence does not have it at all ("Osaka is the capital of
    Japan" against "Tokyo is the capital of Japan": a name the evidence lacks, not a sentence-initial word)."""
    toks = tokenize(claim)
    t = terms_of(toks, ev.entities)
    first = toks[0] if toks else None
    if first is not None and first.kind == "word" and first.capital and first.initial \
            and first.key not in t.entities and first.key not in ev.keys and first.key not in COMMON_KEYS:
        t = replace(t, entities=t.entities | {first.key})
    return t


# ------------------------------------------------------------------ coverage of a claim by evidence units
#: Weight of a named entity, number or month in the coverage (other content words weigh 1).
MATERIAL_WEIGHT = 2.0


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
               limit: int) -> list[tuple[float, int]]:
    """(coverage, unit id) of the `limit` units covering most of the claim, best first (ties: earlier unit),
    summed over the inverted index (the cost is the postings of the claim's keys, not the evidence's length)."""
    sums: dict[int, float] = {}
    for k, weight in w.items():
        for i in index.get(k, ()):
            sums[i] = sums.get(i, 0.0) + weight
    return [(s / total, i) for i, s in heapq.nsmallest(limit, sums.items(), key=lambda x: (-x[1], x[0]))]
