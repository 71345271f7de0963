"""Evidence preparation for the entailment scorer: sentences and clauses, analysed and indexed once.

`prepare(evidence)` splits the evidence texts into sentences (pronouns resolved, segment.py) and each
sentence into clauses (a relative clause gets its antecedent as subject), analyses every unit into `Terms`
and a reading-order key sequence, and builds an inverted index from key to sentence. Cached by content.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import lru_cache

from evalrun.grading.builtin.segment import resolved_sentences
from evalrun.grading.builtin.stemming import COMMON_KEYS
from evalrun.grading.builtin.terms import Terms, merge_terms, terms_and_sequence, terms_of
from evalrun.grading.builtin.tokens import Token, tokenize

_CLAUSE_SEPARATORS = (";", ", and ", ", but ", " but ", ", while ", " while ", ", whereas ", " whereas ",
                      ", although ", " although ", ", who ", ", which ", " because ", ", so ", ": ")
_RELATIVE = frozenset({", who ", ", which "})
_CLAUSE_RE = re.compile("(" + "|".join(re.escape(s) for s in _CLAUSE_SEPARATORS) + ")")


class Unit:
    """One evidence sentence or clause (a sentence's merged terms are built on first use)."""

    __slots__ = ("text", "parts", "item", "sentence", "seq", "clause_ids", "keys", "_terms")

    def __init__(self, text: str, parts: tuple[Terms, ...], item: int, sentence: int,
                 seq: tuple[str, ...] = (), clause_ids: tuple[int, ...] = ()) -> None:
        self.text = text
        self.parts = parts  # the terms of its clauses (one for a clause)
        self.item = item  # index of the evidence text it came from
        self.sentence = sentence  # index of its sentence
        self.seq = seq  # content keys in reading order, with "~by" / "~not" markers (terms.sequence)
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
    run: list[str] = []
    for w in reversed(words):
        if w[:1].isupper():
            run.insert(0, w)
        else:
            break
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
            clauses.append(Unit(c, (t,), item, si, q))
        sents.append(Unit(s, tuple(parts), item, si, seqs[0] if len(seqs) == 1 else tuple(k for q in seqs for k in q),
                          tuple(range(first, len(clauses)))))
    return Evidence(tuple(sents), tuple(clauses), frozenset(keys), frozenset(ents), _index(sents))


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
