"""Tokenising for the builtin grader: a text as words and numbers, each with its normalised key and kind.

`tokenize(text)` expands contractions, writes out ISO dates and spelled fractions, reads numbers with their
scale words ("4.2 billion", "twenty five million"), and classifies every word: stopword, negation, ordinal, month or weekday, unit after a number, or content word keyed by
its stem (stemming.py). Pure, deterministic and cached.
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
from evalrun.grading.builtin.stemming import stem

#: "a half" and "half" as numbers, but not "an hour and a half" / "two and a half" (a whole plus a fraction).
_FRACTIONS_RE = re.compile(r"(?<!\band )(?<!\band)\b(?:(?:a|one)\s+(half|third|quarter|fifth)|(?<!and a )(half))\b", re.I)
_FRACTION_VALUE = {"half": "0.5", "third": "0.333", "quarter": "0.25", "fifth": "0.2"}
_ISO_DATE_RE = re.compile(r"\b(1\d{3}|20\d{2})-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])\b")
_MONTH_NAMES = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
                "October", "November", "December")


def _iso_date(m: re.Match[str]) -> str:
    """2023-05-01 -> "1 May 2023" (the same terms as the date written out)."""
    return f"{int(m.group(3))} {_MONTH_NAMES[int(m.group(2)) - 1]} {m.group(1)}"


def rewrite_dates_and_fractions(text: str) -> str:
    """`text` with ISO dates written out and spelled fractions ("a half", "one third") as decimals."""
    if "-" in text:
        text = _ISO_DATE_RE.sub(_iso_date, text)
    lowered = text.lower()
    if "half" in lowered or "third" in lowered or "quarter" in lowered or "fifth" in lowered:
        text = _FRACTIONS_RE.sub(lambda m: _FRACTION_VALUE[(m.group(1) or m.group(2)).lower()], text)
    return text


def canon_number(value: float) -> str:
    """The key of a number: an integer without a decimal point, otherwise six significant digits."""
    if value == int(value):
        return str(int(value))
    return f"{value:.6g}"


def read_numeral(raw: list[str], i: int) -> tuple[float, int, bool]:
    """(value, index after it, is a year) of the numeral `raw[i]` ("$1,200", "12%") and its scale words."""
    tok = raw[i]
    n = len(raw)
    digits = tok.lstrip("$€£").rstrip("%").replace(",", "")
    value = float(digits)
    is_year = (tok.isdigit() and len(tok) == 4 and 1000 <= value <= 2100)
    j = i + 1
    while j < n and raw[j].lower() in SCALES:
        value *= SCALES[raw[j].lower()]
        j += 1
        is_year = False
    return value, j, is_year


def read_number_words(raw: list[str], i: int) -> tuple[float, int]:
    """(value, index after it) of the number word `raw[i]` with the units and scale words after it."""
    n = len(raw)
    value = float(NUMBER_WORDS[raw[i].lower()])
    j = i + 1
    while j < n and raw[j].lower() in NUMBER_WORDS and NUMBER_WORDS[raw[j].lower()] < 10 <= value:
        value += NUMBER_WORDS[raw[j].lower()]
        j += 1
    while j < n and raw[j].lower() in SCALES:
        value *= SCALES[raw[j].lower()]
        j += 1
    return value, j


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
        initial = i == 0
        if tok[0] in "0123456789$€£":  # ASCII digits only: str.isdigit() is true for "፭" too
            value, j, is_year = read_numeral(raw, i)
            out.append(Token(" ".join(raw[i:j]), canon_number(value), "year" if is_year else "num", initial=initial))
            if tok[0] in _CURRENCY:  # "$4.2" reads as "4.2 dollars", "12%" as "12 percent"
                out.append(Token(tok[0], _CURRENCY[tok[0]], "word"))
            if tok[-1] == "%":
                out.append(Token("%", _PERCENT, "word"))
            i = j
            continue
        lower = tok.lower()
        capital = tok[0].isupper()
        if lower == "one" and not (i + 1 < n and (raw[i + 1].lower() in SCALES or raw[i + 1].lower() in _TIME_UNITS)):
            out.append(Token(tok, lower, "stop", capital, initial))  # "one of", "one day"
        elif lower == "may" and capital and (not initial or (i + 1 < n and raw[i + 1][0].isdigit())):
            out.append(Token(tok, "may", "month", True, initial))
        elif lower in NUMBER_WORDS:
            value, i = read_number_words(raw, i)
            out.append(Token(tok, canon_number(value), "num", initial=initial))
            continue
        elif lower in SCALES and lower != "hundred":  # "a million" with no digit: treat as a number
            out.append(Token(tok, canon_number(SCALES[lower]), "num", initial=initial))
        elif lower in NEGATIONS:
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
            out.append(Token(tok, stem(lower), "word", capital, initial))
        i += 1
    return tuple(out)


_CURRENCY = {"$": stem("dollar"), "€": stem("euro"), "£": stem("pound")}
_PERCENT = stem("percent")


def clear_caches() -> None:
    """Forget the memoised tokens (for cold-start benchmarks)."""
    tokenize.cache_clear()
