"""Quantities as a claim or evidence states them: value, kind, unit of measure and relation ("less than 5",
"about", "before 1989", "the 1910s"); when one makes another true (`satisfies`), rules it out (`excludes`) or
states the same duration in other units (`same_duration`), and which of a claim's numbers the evidence verifies
(`verified_numbers`). conflicts.py decides with them when a number contradicts."""

from __future__ import annotations

import math
import operator
from functools import lru_cache
from typing import NamedTuple

from evalrun.grading.builtin.evidence import Evidence
from evalrun.grading.builtin.lexicon import UNITS, stem, words
from evalrun.grading.builtin.terms import Token, tokenize

#: "about X" / "around X" is satisfied by an evidence number within this relative distance of X.
APPROX_TOLERANCE = 0.1

_BELOW = words("less fewer under below lower")
_ABOVE = words("more over above greater higher exceeding exceeds")
_APPROX = words("about around approximately nearly almost roughly circa approx some")
#: Keys of units of measure (a number with another of these is another quantity, not another value).
UNIT_KEYS = frozenset(stem(u) for u in (*UNITS.values(), *words(
    "metre meter kilometre kilometer mile foot feet inch yard gram kilogram tonne ton pound ounce litre liter "
    "gallon second minute hour day week month year decade century percent dollar euro pound yen acre hectare "
    "degree celsius fahrenheit volt watt kilowatt megawatt byte kilobyte megabyte gigabyte")))


class Quantity(NamedTuple):
    """A number as stated: value, kind ("num", "year", "ord", "day"), unit of measure (a key of UNIT_KEYS, from the
    word after it) or None, and its relation to the value."""

    key: str  # "#value", as in Terms.keys
    text: str  # as written ("$4.2 billion")
    value: float
    kind: str
    unit: str | None
    unit_text: str | None  # the unit as written ("metres")
    relation: str  # "=", "<", ">", "<=", ">=", "~", "decade"


def quantities(tokens: tuple[Token, ...]) -> list[Quantity]:
    """The numbers of a token sequence with their kind, unit and the comparative before them."""
    out: list[Quantity] = []
    for i, t in enumerate(tokens):
        if t.kind not in ("num", "year", "ord"):
            continue
        nxt = next((u for u in tokens[i + 1:i + 3] if u.kind != "stop"), None)
        prev = tokens[i - 1] if i else None
        kind = "day" if t.kind in ("num", "ord") and ((nxt is not None and nxt.kind == "month")
                                                      or (prev is not None and prev.kind == "month")) else t.kind
        word = nxt if nxt is not None and nxt.kind == "word" and nxt.key in UNIT_KEYS and kind != "year" else None
        month = prev if prev is not None and prev.kind == "month" else nxt if kind == "day" else None
        value = _value(t.key) + (100 * _MONTH_ORDER.get(month.key, 0) if kind == "day" and month else 0)
        relation = _relation(tokens, i - 1 if prev is month and month is not None else i)
        if relation == "=" and kind in ("year", "day"):
            relation = _date_relation(tokens, i - 1 if prev is month and month is not None else i)
        if i + 1 < len(tokens) and tokens[i + 1].text == "s" and t.key.endswith("0"):  # "the 1910s", "his 60s"
            relation = {"=": "decade", ">": ">", "<": "<"}.get(relation, relation)
            value += 9 if relation == ">" else 0
        text = t.text if not (kind == "day" and month) else \
            f"{month.text} {t.text}" if prev is month else f"{t.text} {month.text}"
        out.append(Quantity("#" + t.key, text, value, kind, word.key if word else None,
                            word.text if word else None, relation))
    return out


#: Month keys in calendar order, so that "April 12" comes before "April 15" and "March 30" before "April 2".
_MONTH_ORDER = {k: i for i, k in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct",
                                            "nov", "dec"), 1)}


def _date_relation(tokens: tuple[Token, ...], i: int) -> str:
    """A year or date stated as a bound: "before 1989" -> "<", "after April 15" -> ">"."""
    before = [t.text.lower() for t in tokens[max(0, i - 2):i]]
    if before[-1:] in (["before"], ["until"], ["till"]) or before[-2:] == ["prior", "to"]:
        return "<"
    if before[-1:] == ["after"]:
        return ">"
    return "="


def _value(key: str) -> float:
    try:
        return float(key.lstrip("o"))
    except ValueError:
        return float("nan")


def _relation(tokens: tuple[Token, ...], i: int) -> str:
    """The comparison a number is stated with: "less than 5" -> "<", "at least 5" -> ">=", "about 5" -> "~"."""
    before = [t.text.lower() for t in tokens[max(0, i - 3):i]]
    if before[-2:] in (["at", "least"], ["no", "fewer"]) or before[-3:] in (["no", "less", "than"],):
        return ">="
    if before[-2:] in (["at", "most"], ["up", "to"]) or before[-3:] in (["no", "more", "than"],):
        return "<="
    head = before[-2] if before[-1:] == ["than"] and len(before) > 1 else before[-1] if before else ""
    if head in _BELOW:
        return "<"
    if head in _ABOVE:
        return ">"
    if head in _APPROX:
        return "~"
    return "="


_COMPARE = {"=": operator.eq, "<": operator.lt, ">": operator.gt, "<=": operator.le, ">=": operator.ge}


def satisfies(q: Quantity, e: Quantity) -> bool:
    """Does the evidence's quantity `e` make the claim's quantity `q` true ("more than 5" and "more than 5" too)?"""
    x, value = q.value, e.value
    if q.kind == "day" and q.relation == e.relation == "=":  # the same day in another month is the month's conflict
        return value % 100 == x % 100
    if e.relation == q.relation and value == x:
        return True
    if q.relation in (">", ">=") and e.relation in (">", ">="):
        return value > x or (value == x and (e.relation == ">" or q.relation == ">="))  # "over 133" > "over 100"
    if q.relation in ("<", "<=") and e.relation in ("<", "<="):
        return value < x or (value == x and (e.relation == "<" or q.relation == "<="))
    if e.relation != "=" and e.relation != "~":
        return False  # "more than 5" in the evidence does not make "6" or "less than 7" true
    if q.relation == "decade":
        return x <= value <= x + 9
    if q.relation == "~":
        return abs(value - x) <= APPROX_TOLERANCE * abs(x)
    return _COMPARE[q.relation](value, x)


#: Durations in days: "24 months" states what "two years" does, "60 minutes" what "one hour" does.
DAYS = {stem("minute"): 1 / 1440, stem("hour"): 1 / 24, stem("day"): 1.0, stem("week"): 7.0, stem("fortnight"): 14.0,
        stem("month"): 30.44, stem("year"): 365.25, stem("decade"): 3652.5}


def excludes(e: Quantity, q: Quantity) -> bool:
    """Does the evidence's quantity `e` rule out the claim's `q`? A bound rules out only what lies beyond it
    ("over $85 million" does not rule out "less than $100 million")."""
    if satisfies(q, e):
        return False
    lo_e, hi_e = _interval(e)
    lo_q, hi_q = _interval(q)
    return hi_e < lo_q or hi_q < lo_e


def _interval(q: Quantity) -> tuple[float, float]:
    x = q.value
    if q.relation == "~":
        return x - APPROX_TOLERANCE * abs(x), x + APPROX_TOLERANCE * abs(x)
    if q.relation == "decade":
        return x, x + 9
    return {"<": (-math.inf, x - 1e-9), "<=": (-math.inf, x), ">": (x + 1e-9, math.inf),
            ">=": (x, math.inf)}.get(q.relation, (x, x))


def same_quantity(a: Quantity, b: Quantity) -> bool:
    """Could `b` state the value of what `a` counts (same kind; the same unit of measure where both have one)?"""
    return a.kind == b.kind and (a.unit is None or b.unit is None or a.unit == b.unit)


def same_duration(q: Quantity, e: Quantity) -> bool:
    """Do `q` and `e` state one duration in different units (within 3%: a month is 30 or 31 days)?"""
    if q.unit is None or e.unit is None or q.unit == e.unit or q.unit not in DAYS or e.unit not in DAYS:
        return False
    a, b = q.value * DAYS[q.unit], e.value * DAYS[e.unit]
    return q.relation == e.relation and abs(a - b) <= 0.03 * max(a, b)


@lru_cache(maxsize=65536)
def unit_quantities(text: str) -> tuple[Quantity, ...]:
    """The quantities of an evidence sentence or clause (cached by its text)."""
    return tuple(quantities(tokenize(text)))


def verified_numbers(claim_q: list[Quantity], ev: Evidence, near: tuple[int, ...]) -> frozenset[str]:
    """Keys of the claim's numbers (and units) that a number of the same kind and unit satisfies, in a sentence that has the
    same value or is among those most about the claim (`near`): comparatives and approximations are understood,
    "less than 160,000" and "159,937". Indexed, so a long context costs no scan."""
    out = set()
    for q in claim_q:
        ids = set(near) | set(ev.sentence_index.get(q.key, ()))
        found = [e for i in ids for e in unit_quantities(ev.sentences[i].text)
                 if (same_quantity(q, e) and satisfies(q, e)) or same_duration(q, e)]
        if found:
            out.add(q.key)
            if q.unit is not None and any(e.unit != q.unit for e in found):  # "one hour" verified by "60 minutes"
                out.add(q.unit)
    return frozenset(out)


_RELATION_WORDS = {"<": "less than", ">": "more than", "<=": "at most", ">=": "at least", "~": "about"}


def stated(q: Quantity) -> str:
    """A quantity as a reason quotes it: "more than 40", "the 1910s"."""
    if q.relation == "decade":
        return f"the {q.text}s"
    if q.kind in ("year", "day") and q.relation in ("<", ">"):
        return ("before " if q.relation == "<" else "after ") + q.text
    return f"{_RELATION_WORDS[q.relation]} {q.text}" if q.relation in _RELATION_WORDS else q.text
