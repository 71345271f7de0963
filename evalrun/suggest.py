"""Did-you-mean hints: the closest meaning wins (words read through a small synonym table), then the closest
spelling."""

from __future__ import annotations

import re
from collections.abc import Iterable

#: Words users write for the ones evalrun's names use.
SYNONYMS = {"every": "all", "each": "all", "some": "any", "include": "contains",
            "includes": "contains", "contain": "contains", "equal": "equals",
            "match": "matches", "regexp": "regex"}
_SPLIT = re.compile(r"[-_]")


def _words(name: str) -> list[str]:
    return [SYNONYMS.get(w, w) for w in _SPLIT.split(name.lower())]


def _rank(word: str, words: list[str], choice: str) -> float:
    import difflib

    theirs = _SPLIT.split(choice.lower())
    shared = sum(w in theirs for w in words)
    ratio = difflib.SequenceMatcher(None, word, choice).ratio()
    return ratio + 0.05 * shared / max(len(words), len(theirs)) + 0.05 * (len(words) == len(theirs))


def closest(word: str, choices: Iterable[str], cutoff: float = 0.6) -> str | None:
    """The choice closest in meaning to `word` (see the module docstring), or None when nothing is close."""
    import difflib  # only when there is a mistake to word (~1.5 ms of every start-up otherwise)

    options = list(choices)
    words = _words(word)
    meant = "-".join(words)
    for c in options:  # a synonym spelled out: `contains-every` -> `contains-all`
        if c.lower() == meant or "-".join(_words(c)) == meant:
            return c
    near = difflib.get_close_matches(meant, options, n=6, cutoff=cutoff) + \
        difflib.get_close_matches(word, options, n=6, cutoff=cutoff)
    if not near:
        return None
    return max(dict.fromkeys(near), key=lambda c: _rank(meant, words, c))


def did_you_mean(word: str, choices: Iterable[str]) -> str | None:
    """Return 'did you mean `x`?' for the closest choice, or None when nothing is close."""
    match = closest(word, choices)
    return f"did you mean `{match}`?" if match else None
