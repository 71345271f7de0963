"""Tokenising for the builtin grader: a text as words and numbers, each with its normalised key and kind.

`tokenize(text)` expands contractions, reads numbers with their scale words (quantities.py), and classifies
every word: stopword, negation, ordinal, month or weekday, unit after a number, or content word keyed by
its stem (stemming.py). Pure, deterministic and cached; context-free words and numbers are also memoised
as written, so repeated evidence costs little.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import NamedTuple

from evalrun.grading.builtin.lexicon import (
    MONTHS,
    NEGATIONS,
    NUMBER_WORDS,
    ORDINALS,
    SCALES,
    STOPWORDS,
    UNITS,
    WEEKDAYS,
)
from evalrun.grading.builtin.quantities import (
    canon_number,
    read_number_words,
    read_numeral,
    rewrite_dates_and_fractions,
)
from evalrun.grading.builtin.stemming import stem

#: One token: a number (with optional currency, thousands separators, decimals, percent) or a word.
#: Hyphens and slashes separate words ("high-level", "km/h"); "3-1" is two numbers.
#: A word starts with a letter and may carry digits ("km2", "CO2", "G7"). Numbers are ASCII digits: other scripts'
#: digits (Ethiopic "፭፻") are not read as numbers.
_TOKEN_RE = re.compile(r"[$€£]?[0-9]+(?:,[0-9]{3})*(?:\.[0-9]+)?%?|[^\W\d_](?:[^\W_]|')*")
#: "one hour" is a duration ("within one hour" = "within 60 minutes"); "one of", "one day I" are not numbers.
_TIME_UNITS = frozenset("second minute hour week month year decade century seconds minutes hours weeks months "
                        "years decades".split())
#: A hyphen between a word and a number makes one name ("COVID-19", "F-16", "Apollo-11"), not a quantity.
_NAME_NUMBER_RE = re.compile(r"(?<=[^\W\d_])-(?=[0-9])")
#: A lowercase-to-capital change inside a word: two words glued together (scraped text) or a camel-cased name.
_GLUED_RE = re.compile(r"(?<=[a-z]{2})(?=[A-Z][a-z])")
_CONTRACTIONS = (
    (re.compile(r"\b(can)'?t\b", re.I), r"\1 not"),
    (re.compile(r"\bwon't\b", re.I), "will not"),
    (re.compile(r"n't\b", re.I), " not"),
    # the rest expand to stopwords, so "You'll" or "There's" is not taken for a word the claim asserts
    (re.compile(r"'ll\b", re.I), " will"),
    (re.compile(r"'ve\b", re.I), " have"),
    (re.compile(r"'re\b", re.I), " are"),
    (re.compile(r"'d\b", re.I), " would"),
    (re.compile(r"\b(i)'m\b", re.I), r"\1 am"),
    (re.compile(r"\b(there|that|it|he|she|what|here|who|where|how|let)'s\b", re.I), r"\1 is"),
)


class Token(NamedTuple):
    """A word or number as written (`text`), its normalised key, and its kind."""

    text: str
    key: str
    kind: str  # "word" | "stop" | "num" | "year" | "ord" | "month" | "neg"
    capital: bool = False
    initial: bool = False  # first word of its sentence


@lru_cache(maxsize=65536)
def tokenize(text: str) -> tuple[Token, ...]:
    """Words and numbers of `text`, with numbers merged with their scale words ("4.2 billion"). Cached."""
    if "'" in text or "\u2019" in text:
        text = text.replace("\u2019", "'")
        for rx, rep in _CONTRACTIONS:
            text = rx.sub(rep, text)
    text = rewrite_dates_and_fractions(_NAME_NUMBER_RE.sub("", text))
    if _GLUED_RE.search(text):  # "ZodiacZodiac", "JavaScript": both sides of a comparison split alike
        text = _GLUED_RE.sub(" ", text)
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
        if tok[0] in "0123456789$€£":  # ASCII digits only: str.isdigit() is true for "፭" too
            if i and (i + 1 == n or raw[i + 1].lower() not in SCALES):  # a number seen before, no scale word
                known = _NUMBERS.get(tok)
                if known is not None:
                    out.extend(known)
                    i += 1
                    continue
            start = len(out)
            value, j, is_year = read_numeral(raw, i)
            written = " ".join(raw[i:j])
            out.append(Token(written, canon_number(value), "year" if is_year else "num", initial=initial))
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
        if lower == "one" and not (i + 1 < n and (raw[i + 1].lower() in SCALES or raw[i + 1].lower() in _TIME_UNITS)):
            out.append(Token(tok, lower, "stop", tok[0].isupper(), initial))  # "one of", "one day"
            i += 1
            continue
        if lower == "may" and tok[0].isupper() and (not initial or (i + 1 < n and raw[i + 1][0].isdigit())):
            out.append(Token(tok, "may", "month", True, initial))
            i += 1
            continue
        if lower in NUMBER_WORDS:
            value, j = read_number_words(raw, i)
            out.append(Token(tok, canon_number(value), "num", initial=initial))
            i = j
            continue
        if lower in SCALES and lower != "hundred":  # "a million" with no digit: treat as a number
            out.append(Token(tok, canon_number(SCALES[lower]), "num", initial=initial))
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


def clear_caches() -> None:
    """Forget the memoised tokens (for cold-start benchmarks)."""
    tokenize.cache_clear()
    _PLAIN.clear()
    _WORDS.clear()
    _NUMBERS.clear()
