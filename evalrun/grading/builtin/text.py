"""Text analysis for the builtin grader in one import: tokens, stems, and terms (entities, numbers, negations).

The parts live in their own modules: `tokens` (tokenising), `quantities` (numbers and dates as written),
`stemming` (stems, synonyms, antonyms) and `terms` (the `Terms` of a sentence, clause or claim). This module
re-exports their public names and clears all their caches at once.
"""

from __future__ import annotations

from evalrun.grading.builtin.stemming import ANTONYMS, base_stem, stem, synonym_key
from evalrun.grading.builtin.stemming import clear_caches as _clear_stems
from evalrun.grading.builtin.terms import (
    Terms,
    analyse,
    content_words,
    entity_keys,
    merge_terms,
    sequence,
    terms_and_sequence,
    terms_of,
)
from evalrun.grading.builtin.terms import clear_caches as _clear_terms
from evalrun.grading.builtin.tokens import Token, tokenize
from evalrun.grading.builtin.tokens import clear_caches as _clear_tokens

__all__ = [
    "ANTONYMS",
    "Terms",
    "Token",
    "analyse",
    "base_stem",
    "clear_caches",
    "content_words",
    "entity_keys",
    "merge_terms",
    "sequence",
    "stem",
    "synonym_key",
    "terms_and_sequence",
    "terms_of",
    "tokenize",
]


def clear_caches() -> None:
    """Forget every memoised result (for cold-start benchmarks)."""
    _clear_tokens()
    _clear_terms()
    _clear_stems()
