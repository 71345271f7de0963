"""Words of the builtin grader: small, generic English tables (evalrun/data/lexicon.json: deliberately short and
domain-neutral, for everyday rewording, not paraphrase) and a word's key: a light stemmer, then the synonym table
(one key per synonym group); `ANTONYMS` maps a key to its antonyms' keys."""

from __future__ import annotations

import json
from functools import lru_cache
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
    if len(w) > 7 and w.endswith("able"):  # "refundable" -> "refund", "returnable" -> "return"
        w = w[:-4]
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
    if len(w) > 5 and w.endswith("ll"):  # British doubling: "cancelled" / "cancel", "installed" / "install"
        w = w[:-1]
    return IRREGULAR.get(w, w)


_COMPASS = frozenset({"north", "south", "east", "west"})


def _undouble(w: str) -> str:
    return w[:-1] if len(w) > 2 and w[-1] == w[-2] and w[-1] not in "lszaeiou" else w


def _build_synonyms() -> dict[str, str]:
    table: dict[str, str] = {}
    for group in SYNONYM_GROUPS:
        head = base_stem(group[0])
        for w in group[1:]:
            table.setdefault(base_stem(w), head)
    return table


_SYNONYMS = _build_synonyms()


def _build_antonyms() -> dict[str, frozenset[str]]:
    table: dict[str, set[str]] = {}
    for a, b in ANTONYM_PAIRS:
        ka, kb = stem(a), stem(b)
        table.setdefault(ka, set()).add(kb)
        table.setdefault(kb, set()).add(ka)
    return {k: frozenset(v) for k, v in table.items()}


#: key -> keys of its antonyms.
ANTONYMS = _build_antonyms()

#: Keys of the everyday words the lexicon knows (synonym groups, antonym pairs, light words): a capitalised
#: first word with one of these keys is an ordinary word at the start of a sentence, not a name.
COMMON_KEYS = frozenset(
    {stem(w) for group in SYNONYM_GROUPS for w in group}
    | {stem(w) for pair in ANTONYM_PAIRS for w in pair}
    | {stem(w) for w in LIGHT_WORDS}
)

