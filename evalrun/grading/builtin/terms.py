"""Terms for the builtin grader: the normalised content of a sentence, clause or claim (content keys, named
entities, numbers, months, negations, polar words), and its keys in reading order (`sequence`)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from evalrun.grading.builtin.stemming import ANTONYMS
from evalrun.grading.builtin.tokens import Token, tokenize


@dataclass(frozen=True)
class Terms:
    """The normalised content of one sentence, clause or claim."""

    keys: frozenset[str]  # every content key: stems, numbers, months
    entities: frozenset[str]  # keys written capitalised (named entities, by the rule in `entity_keys`)
    numbers: frozenset[tuple[str, str]]  # (kind, value): kind "num" | "year" | "ord"
    months: frozenset[str]
    negations: int
    polar: frozenset[str]  # keys that have an antonym in the lexicon
    first_key: str | None  # the first content key (the usual subject head)


def entity_keys(tokens: tuple[Token, ...] | list[Token], known: frozenset[str] = frozenset()) -> frozenset[str]:
    """Keys of capitalised content words: not sentence-initial, or initial and also followed by another
    capitalised word ("Marie Curie") or known as an entity from elsewhere (`known`)."""
    ents: set[str] = set()
    for i, t in enumerate(tokens):
        if t.kind != "word" or not t.capital:
            continue
        inner_capital = any(c.isupper() for c in t.text[1:])  # "JavaScript", "NASA"
        next_capital = i + 1 < len(tokens) and tokens[i + 1].capital and tokens[i + 1].kind == "word"
        if not t.initial or inner_capital or t.key in known or next_capital:
            ents.add(t.key)
    return frozenset(ents)


@lru_cache(maxsize=65536)
def analyse(text: str) -> Terms:
    """The `Terms` of one sentence or clause (cached)."""
    return terms_of(tokenize(text))


def terms_of(tokens: tuple[Token, ...] | list[Token], known_entities: frozenset[str] = frozenset()) -> Terms:
    """Build `Terms` from tokens; `known_entities` lets a sentence-initial word count as an entity."""
    keys: set[str] = set()
    numbers: set[tuple[str, str]] = set()
    months: set[str] = set()
    negs = 0
    first: str | None = None
    for t in tokens:
        if t.kind == "stop":
            continue
        if t.kind == "neg":
            negs += 1
            continue
        if t.kind in ("num", "year", "ord"):
            numbers.add((t.kind, t.key))
            keys.add("#" + t.key)
        elif t.kind == "month":
            months.add(t.key)
            keys.add(t.key)
        else:
            keys.add(t.key)
        if first is None:
            first = t.key if t.kind == "word" else None
    frozen = frozenset(keys)
    return Terms(
        keys=frozen,
        entities=entity_keys(tokens, known_entities),
        numbers=frozenset(numbers),
        months=frozenset(months),
        negations=negs,
        polar=frozenset(k for k in frozen if k in ANTONYMS),
        first_key=first,
    )


def sequence(tokens: tuple[Token, ...] | list[Token]) -> tuple[str, ...]:
    """The content keys of `tokens` in reading order (numbers as "#value"), with two markers the order checks
    need: "~by" (the agent of a passive verb follows) and "~not" (a negation)."""
    out: list[str] = []
    for t in tokens:
        if t.kind == "stop":
            if t.key == "by":
                out.append("~by")
        elif t.kind == "neg":
            out.append("~not")
        elif t.kind in ("num", "year", "ord"):
            out.append("#" + t.key)
        else:
            out.append(t.key)
    return tuple(out)


def merge_terms(parts: list[Terms]) -> Terms:
    """The terms of a sentence from the terms of its clauses."""
    return Terms(
        keys=frozenset().union(*(p.keys for p in parts)),
        entities=frozenset().union(*(p.entities for p in parts)),
        numbers=frozenset().union(*(p.numbers for p in parts)),
        months=frozenset().union(*(p.months for p in parts)),
        negations=sum(p.negations for p in parts),
        polar=frozenset().union(*(p.polar for p in parts)),
        first_key=next((p.first_key for p in parts if p.first_key), None),
    )


def content_words(text: str) -> list[tuple[str, str]]:
    """(surface word, key) of the content words of `text`, in order, without duplicates."""
    seen: set[str] = set()
    out: list[tuple[str, str]] = []
    for t in tokenize(text):
        if t.kind in ("word", "num", "year", "month") and t.key not in seen:
            seen.add(t.key)
            out.append((t.text, ("#" + t.key) if t.kind in ("num", "year") else t.key))
    return out


def clear_caches() -> None:
    """Forget the memoised analyses (for cold-start benchmarks)."""
    analyse.cache_clear()


def surface(text: str, keys: list[str]) -> list[str]:
    """The words of `text` as written for the given keys (for reasons)."""
    forms: dict[str, str] = {}
    for tok in tokenize(text):
        k = ("#" + tok.key) if tok.kind in ("num", "year", "ord") else tok.key
        forms.setdefault(k, tok.text)
    return [forms.get(k, k.lstrip("#")) for k in keys]


def short(text: str, limit: int = 90) -> str:
    """`text` cut to `limit` characters with an ellipsis (for quoting evidence in reasons)."""
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"
