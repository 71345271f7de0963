"""Word keys for the builtin grader: a light stemmer, then the synonym and antonym tables over stems.

`base_stem` strips suffixes (Porter-like, with an irregular-form table); `stem` maps the result through the
synonym table, so every word of a synonym group gets one key. `ANTONYMS` maps a key to its antonyms' keys.
Pure, deterministic and cached.
"""

from __future__ import annotations

from functools import lru_cache

from evalrun.grading.builtin.lexicon import ANTONYM_PAIRS, IRREGULAR, LIGHT_WORDS, SYNONYM_GROUPS


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
    if len(w) > 5 and w.endswith("ll"):  # British doubling: "cancelled" / "cancel", "installed" / "install"
        w = w[:-1]
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


def clear_caches() -> None:
    """Forget the memoised stems (for cold-start benchmarks)."""
    stem.cache_clear()
    base_stem.cache_clear()
