"""Wording of the scorer's reasons: a claim's or evidence's words as written, and short quotations."""

from __future__ import annotations

from evalrun.grading.builtin.tokens import tokenize


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
