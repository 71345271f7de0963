"""Text normalisation for the builtin grader: tokens, stems, numbers, dates, entities, negations.

Everything here is pure and deterministic. `analyse(text)` turns one sentence or clause into a `Terms`
record: the set of normalised content keys (stems mapped through a small generic synonym table, numbers
as canonical values, month names), the subset that are named entities, the numbers by kind, the negation
count, and the polar words (for antonym checks). Results are cached, so repeated evidence is analysed once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

from evalrun.grading.builtin.lexicon import (
    ANTONYM_PAIRS,
    IRREGULAR,
    MONTHS,
    NEGATIONS,
    NUMBER_WORDS,
    ORDINALS,
    SCALES,
    STOPWORDS,
    SYNONYM_GROUPS,
    UNITS,
    WEEKDAYS,
)

#: One token: a number (with optional currency, thousands separators, decimals, percent) or a word.
#: Hyphens and slashes separate words ("high-level", "km/h"); "3-1" is two numbers.
#: A word starts with a letter and may carry digits ("km2", "CO2", "G7").
_TOKEN_RE = re.compile(r"[$€£]?\d+(?:,\d{3})*(?:\.\d+)?%?|[^\W\d_](?:[^\W_]|')*")
_CONTRACTIONS = (
    (re.compile(r"\b(can)'?t\b", re.I), r"\1 not"),
    (re.compile(r"\bwon't\b", re.I), "will not"),
    (re.compile(r"n't\b", re.I), " not"),
)
_FRACTIONS_RE = re.compile(r"\b(?:(?:a|one)\s+(half|third|quarter|fifth)|(half))\b", re.I)
_FRACTION_VALUE = {"half": "0.5", "third": "0.333", "quarter": "0.25", "fifth": "0.2"}
_FRACTION_HINTS = ("half", "third", "quarter", "fifth")
_ISO_DATE_RE = re.compile(r"\b(1\d{3}|20\d{2})-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])\b")
_MONTH_NAMES = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
                "October", "November", "December")


def _iso_date(m: re.Match[str]) -> str:
    """2023-05-01 -> "1 May 2023" (the same terms as the date written out)."""
    return f"{int(m.group(3))} {_MONTH_NAMES[int(m.group(2)) - 1]} {m.group(1)}"


class Token(NamedTuple):
    """A word or number as written (`text`), its normalised key, and its kind."""

    text: str
    key: str
    kind: str  # "word" | "stop" | "num" | "year" | "ord" | "month" | "neg"
    capital: bool = False
    initial: bool = False  # first word of its sentence


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


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """The normalised key of a word: `base_stem`, then the synonym table (one key per synonym group)."""
    base = base_stem(word)
    return _SYNONYMS.get(base, base)


@lru_cache(maxsize=65536)
def base_stem(word: str) -> str:
    """A light, deterministic suffix stripper (Porter-like) with an irregular-form table."""
    w = word.lower().strip("'")
    if w.endswith("'s"):
        w = w[:-2]
    w = IRREGULAR.get(w, w)
    if len(w) > 4:
        if w.endswith("ies") or w.endswith("ied"):
            w = w[:-3] + "y"
        elif w.endswith(("sses", "ches", "shes")) or (w.endswith("es") and w[-3] in "sxz"):
            w = w[:-2]
        elif w.endswith("s") and not w.endswith(("ss", "us", "is")):
            w = w[:-1]
    if len(w) > 6 and w.endswith("ness"):  # "tiredness" -> "tired", "happiness" -> "happy"
        w = w[:-4]
        if w.endswith("i"):
            w = w[:-1] + "y"
    if len(w) > 5 and w.endswith("ing"):
        w = _undouble(w[:-3])
    elif len(w) > 4 and w.endswith("ed"):
        w = _undouble(w[:-2])
    elif len(w) > 5 and w.endswith("ly"):
        w = w[:-2]
    if len(w) > 7 and w.endswith(("ability", "ibility")):  # "compatibility" -> "compatible"
        w = w[:-5] + "le"
    elif len(w) > 6 and w.endswith(("thern", "stern")) and w[:-3] in _COMPASS:  # "southern" -> "south"
        w = w[:-3]
    if len(w) > 6 and w.endswith("ation"):
        w = w[:-5] + "ate"
    elif len(w) > 6 and w.endswith(("tion", "sion")):
        w = w[:-3]
    elif len(w) > 6 and w.endswith("ment"):
        w = w[:-4]
    if len(w) > 3 and w.endswith("e"):
        w = w[:-1]
    if len(w) > 4 and w.endswith("uc"):  # "produce"/"producing" -> "product", as "production"
        w += "t"
    return IRREGULAR.get(w, w)


_COMPASS = frozenset({"north", "south", "east", "west"})


def _undouble(w: str) -> str:
    if len(w) > 2 and w[-1] == w[-2] and w[-1] not in "lsz" and w[-1] not in "aeiou":
        return w[:-1]
    return w


def _build_synonyms() -> dict[str, str]:
    table: dict[str, str] = {}
    for group in SYNONYM_GROUPS:
        head = base_stem(group[0])
        for w in group[1:]:
            table.setdefault(base_stem(w), head)
    return table


_SYNONYMS = _build_synonyms()


def synonym_key(base: str) -> str:
    """The key of an already stemmed word (its synonym group's key, or itself)."""
    return _SYNONYMS.get(base, base)


def _build_antonyms() -> dict[str, frozenset[str]]:
    table: dict[str, set[str]] = {}
    for a, b in ANTONYM_PAIRS:
        ka, kb = stem(a), stem(b)
        table.setdefault(ka, set()).add(kb)
        table.setdefault(kb, set()).add(ka)
    return {k: frozenset(v) for k, v in table.items()}


#: key -> keys of its antonyms.
ANTONYMS = _build_antonyms()


def _canon_number(value: float) -> str:
    if value == int(value):
        return str(int(value))
    return f"{value:.6g}"


@lru_cache(maxsize=65536)
def tokenize(text: str) -> tuple[Token, ...]:
    """Words and numbers of `text`, with numbers merged with their scale words ("4.2 billion"). Cached."""
    if "'" in text or "\u2019" in text:
        text = text.replace("\u2019", "'")
        for rx, rep in _CONTRACTIONS:
            text = rx.sub(rep, text)
    if "-" in text:
        text = _ISO_DATE_RE.sub(_iso_date, text)
    lowered = text.lower()
    if "half" in lowered or "third" in lowered or "quarter" in lowered or "fifth" in lowered:  # _FRACTION_HINTS
        text = _FRACTIONS_RE.sub(lambda m: _FRACTION_VALUE[(m.group(1) or m.group(2)).lower()], text)
    raw = _TOKEN_RE.findall(text)
    out: list[Token] = []
    i = 0
    n = len(raw)
    while i < n:
        tok = raw[i]
        if i:  # a word seen before, not first in its text: its token does not depend on the neighbours
            hit = _WORDS.get(tok)
            if hit is not None:
                out.append(hit)
                i += 1
                continue
        initial = i == 0
        if tok[0].isdigit() or tok[0] in "$€£":
            if i and (i + 1 == n or raw[i + 1].lower() not in SCALES):  # a number seen before, no scale word
                known = _NUMBERS.get(tok)
                if known is not None:
                    out.extend(known)
                    i += 1
                    continue
            start = len(out)
            digits = tok.lstrip("$€£").rstrip("%").replace(",", "")
            value = float(digits)
            is_year = (tok.isdigit() and len(tok) == 4 and 1000 <= value <= 2100)
            j = i + 1
            while j < n and raw[j].lower() in SCALES:
                value *= SCALES[raw[j].lower()]
                j += 1
                is_year = False
            written = " ".join(raw[i:j])
            out.append(Token(written, _canon_number(value), "year" if is_year else "num", initial=initial))
            if tok[0] in _CURRENCY:  # "$4.2" reads as "4.2 dollars", "12%" as "12 percent"
                out.append(Token(tok[0], _CURRENCY[tok[0]], "word"))
            if tok[-1] == "%":
                out.append(Token("%", _PERCENT, "word"))
            if i and j == i + 1:
                if len(_NUMBERS) > _PLAIN_MAX:
                    _NUMBERS.clear()
                _NUMBERS[tok] = tuple(out[start:])
            i = j
            continue
        lower = tok.lower()
        plain = _PLAIN.get(lower)
        if plain is None and lower not in _CONTEXTUAL:
            if len(_PLAIN) > _PLAIN_MAX:
                _PLAIN.clear()
            plain = _PLAIN[lower] = _classify(lower)
        if plain is not None:  # the common case: the word's kind does not depend on its neighbours
            token = Token(tok, plain[1], plain[0], tok[0].isupper(), initial)
            out.append(token)
            if i:
                if len(_WORDS) > _PLAIN_MAX:
                    _WORDS.clear()
                _WORDS[tok] = token
            i += 1
            continue
        if lower == "one" and not (i + 1 < n and raw[i + 1].lower() in SCALES):
            out.append(Token(tok, lower, "stop", tok[0].isupper(), initial))  # "one of", "one day"
            i += 1
            continue
        if lower == "may" and tok[0].isupper() and not initial:
            out.append(Token(tok, "may", "month", True, initial))
            i += 1
            continue
        if lower in NUMBER_WORDS:
            value = float(NUMBER_WORDS[lower])
            j = i + 1
            while j < n and raw[j].lower() in NUMBER_WORDS and NUMBER_WORDS[raw[j].lower()] < 10 <= value:
                value += NUMBER_WORDS[raw[j].lower()]
                j += 1
            while j < n and raw[j].lower() in SCALES:
                value *= SCALES[raw[j].lower()]
                j += 1
            out.append(Token(tok, _canon_number(value), "num", initial=initial))
            i = j
            continue
        if lower in SCALES and lower != "hundred":  # "a million" with no digit: treat as a number
            out.append(Token(tok, _canon_number(SCALES[lower]), "num", initial=initial))
            i += 1
            continue
        capital = tok[0].isupper()
        if lower in NEGATIONS:
            out.append(Token(tok, "not", "neg", capital, initial))
        elif lower in ORDINALS:
            out.append(Token(tok, f"o{ORDINALS[lower]}", "ord", capital, initial))
        elif lower in MONTHS:
            out.append(Token(tok, MONTHS[lower], "month", capital, initial))
        elif lower in WEEKDAYS:
            out.append(Token(tok, lower[:3], "month", capital, initial))
        elif lower in UNITS and out and out[-1].kind == "num":
            out.append(Token(tok, stem(UNITS[lower]), "word", capital, initial))
        elif lower in STOPWORDS or (len(lower) < 2 and not (capital and not initial)):
            out.append(Token(tok, lower, "stop", capital, initial))
        else:
            key = stem(lower)
            out.append(Token(tok, key, "word", capital, initial))
        i += 1
    return tuple(out)


_CONTEXTUAL = frozenset(NUMBER_WORDS) | frozenset(SCALES) | frozenset(UNITS) | {"one", "may"}
_CURRENCY = {"$": stem("dollar"), "€": stem("euro"), "£": stem("pound")}
_PERCENT = stem("percent")
#: Memo of context-free word classifications: lowercase word -> (kind, key).
_PLAIN: dict[str, tuple[str, str] | None] = {}
_PLAIN_MAX = 200_000
#: Memo of the tokens of context-free words as written, when not first in their text.
_WORDS: dict[str, Token] = {}
#: Memo of the tokens of numbers as written, not first in their text and without a scale word.
_NUMBERS: dict[str, tuple[Token, ...]] = {}


def _classify(lower: str) -> tuple[str, str] | None:
    """(kind, key) of a word whose kind needs no context; None for single letters (context decides)."""
    if lower in NEGATIONS:
        return ("neg", "not")
    if lower in ORDINALS:
        return ("ord", f"o{ORDINALS[lower]}")
    if lower in MONTHS:
        return ("month", MONTHS[lower])
    if lower in WEEKDAYS:
        return ("month", lower[:3])
    if lower in STOPWORDS:
        return ("stop", lower)
    if len(lower) < 2:
        return None
    return ("word", stem(lower))


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


def terms_and_sequence(tokens: tuple[Token, ...], known_entities: frozenset[str] = frozenset(),
                       ) -> tuple[Terms, tuple[str, ...]]:
    """`terms_of(tokens, known_entities)` and `sequence(tokens)` in one pass (evidence preparation)."""
    keys: set[str] = set()
    numbers: set[tuple[str, str]] = set()
    months: set[str] = set()
    ents: set[str] = set()
    seq: list[str] = []
    negs = 0
    first: str | None = None
    n = len(tokens)
    for i, t in enumerate(tokens):
        kind = t.kind
        if kind == "word":
            k = t.key
            keys.add(k)
            seq.append(k)
            if first is None:
                first = k
            if t.capital and (not t.initial or k in known_entities
                              or (i + 1 < n and tokens[i + 1].capital and tokens[i + 1].kind == "word")
                              or any(c.isupper() for c in t.text[1:])):
                ents.add(k)
        elif kind == "stop":
            if t.key == "by":
                seq.append("~by")
        elif kind == "neg":
            negs += 1
            seq.append("~not")
        elif kind == "month":
            months.add(t.key)
            keys.add(t.key)
            seq.append(t.key)
        else:
            k = "#" + t.key
            numbers.add((kind, t.key))
            keys.add(k)
            seq.append(k)
    frozen = frozenset(keys)
    terms = Terms(keys=frozen, entities=frozenset(ents), numbers=frozenset(numbers), months=frozenset(months),
                  negations=negs, polar=frozenset(k for k in frozen if k in ANTONYMS), first_key=first)
    return terms, tuple(seq)


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


def clear_caches() -> None:
    """Forget every memoised result (for cold-start benchmarks)."""
    for f in (tokenize, analyse, stem, base_stem):
        f.cache_clear()
    _PLAIN.clear()
    _WORDS.clear()
    _NUMBERS.clear()


def content_words(text: str) -> list[tuple[str, str]]:
    """(surface word, key) of the content words of `text`, in order, without duplicates."""
    seen: set[str] = set()
    out: list[tuple[str, str]] = []
    for t in tokenize(text):
        if t.kind in ("word", "num", "year", "month") and t.key not in seen:
            seen.add(t.key)
            out.append((t.text, ("#" + t.key) if t.kind in ("num", "year") else t.key))
    return out
