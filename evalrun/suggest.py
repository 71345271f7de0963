"""Did-you-mean hints for misspelled keys and names."""

from __future__ import annotations

from collections.abc import Iterable


def did_you_mean(word: str, choices: Iterable[str]) -> str | None:
    """Return 'did you mean `x`?' for the closest choice, or None when nothing is close."""
    import difflib  # only when there is a mistake to word (~1.5 ms of every start-up otherwise)

    match = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f"did you mean `{match[0]}`?" if match else None
