"""Word lists of the builtin grader: small, generic English tables, no model, no download.

The long lists (stopwords, light words, negations, irregular forms, unit abbreviations, synonym groups, antonym
pairs) are data: evalrun/data/lexicon.json. The synonym and antonym tables are deliberately short and
domain-neutral; they make the lexical scorer tolerate everyday rewording, not understand paraphrase.
"""

from __future__ import annotations

import json
from importlib import resources


def words(text: str) -> frozenset[str]:
    """The whitespace-separated words of `text` as a frozenset (keeps long word lists readable)."""
    return frozenset(text.split())


_DATA = json.loads(resources.files("evalrun").joinpath("data/lexicon.json").read_text(encoding="utf-8"))

STOPWORDS = words(" ".join(_DATA["stopwords"]))
#: Frequent, low-information content words: they weigh LIGHT_WEIGHT in the coverage (an IDF stand-in).
LIGHT_WORDS = words(" ".join(_DATA["light_words"]))
#: Words that negate their clause (after contractions are expanded: "didn't" -> "did not"); a few negate
#: without "not" ("absent", "lacks", "without").
NEGATIONS = words(" ".join(_DATA["negations"]))
#: Irregular inflections -> base form (applied before and after suffix stripping).
IRREGULAR: dict[str, str] = _DATA["irregular"]
#: Unit abbreviations -> the word they abbreviate (then stemmed like any word).
UNITS: dict[str, str] = _DATA["units"]
#: Groups of interchangeable words (the first is the group's key). Generic, everyday vocabulary only.
SYNONYM_GROUPS: tuple[tuple[str, ...], ...] = tuple(map(tuple, _DATA["synonym_groups"]))
#: Pairs of opposites: a claim using one where the matching evidence uses the other is contradicted.
ANTONYM_PAIRS: tuple[tuple[str, str], ...] = tuple((a, b) for a, b in _DATA["antonym_pairs"])

_MONTH_NAMES = "january february march april june july august september october november december"
#: Month names and abbreviations -> a three-letter key. Not "may": far more often the modal verb, it is a month
#: only when capitalised (handled in tokenize's caller).
MONTHS = {**{m: m[:3] for m in _MONTH_NAMES.split()}, "sept": "sep",
          **{m[:3]: m[:3] for m in _MONTH_NAMES.split() if m != "may"}}
WEEKDAYS = words("monday tuesday wednesday thursday friday saturday sunday")

_UNITS_WORDS = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
                "sixteen seventeen eighteen nineteen twenty").split()
NUMBER_WORDS: dict[str, int] = {
    **{w: i for i, w in enumerate(_UNITS_WORDS)},
    "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90,
    "dozen": 12, "twice": 2, "double": 2, "triple": 3,
}
SCALES: dict[str, float] = {"hundred": 1e2, "thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12,
                            "bn": 1e9}
ORDINALS: dict[str, int] = {w: i + 1 for i, w in enumerate(
    "first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth".split())}
