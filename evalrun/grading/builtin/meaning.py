"""The builtin grader's semantic tier: how close in meaning a text is to evidence sentences.

Sentence embeddings from the offline model (grading/minilm.py: all-MiniLM-L6-v2, int8 ONNX, part of the default
install); cosine similarity between unit-length vectors. Used where words alone cannot decide and meaning does
(measured on the dev splits, benchmarks/grading/README.md): a chunk that answers a question in other words
(relevance.py). Polarity is not its job (embeddings barely see "not"): conflicts.py keeps it.
Without the model (an install that lacks onnxruntime) `available()` is false and the grader is lexical only.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

from evalrun.grading import minilm


@cache
def available() -> bool:
    """The embedder can run here."""
    return minilm.available()


def closest(text: str, candidates: Sequence[str]) -> tuple[int, float]:
    """(index, cosine) of the candidate closest in meaning to `text`; (-1, 0.0) without candidates."""
    if not candidates:
        return -1, 0.0
    vectors = minilm.embed([text, *candidates])
    sims = vectors[1:] @ vectors[0]
    best = int(sims.argmax())
    return best, float(sims[best])


def similarities(text: str, candidates: Sequence[str]) -> list[float]:
    """Cosine similarity of `text` to each candidate."""
    if not candidates:
        return []
    vectors = minilm.embed([text, *candidates])
    return [float(s) for s in vectors[1:] @ vectors[0]]
