"""A tiny retrieval-augmented "application" used as an evalrun provider.

Retrieval: the knowledge/ folder's paragraphs are the chunks; each is scored against the query by term overlap
weighted by inverse document frequency, and the top K are retrieved. Answering: the sentences of the retrieved
chunks that best match the query are returned, verbatim, in retrieval order (an extractive answer, so the example
needs no model). The provider returns the answer as its output and the retrieved chunks in its metadata, where
evalrun's `contextTransform` picks them up.
"""

from __future__ import annotations

import math
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

KNOWLEDGE = Path(__file__).parent / "knowledge"
TOP_K = 3
ANSWER_SENTENCES = 2
_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    "a an and are as at be by did do does for from has have how in is it its of on or the to was were what when "
    "where which who why with".split()
)


def _terms(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if w not in _STOP]


@lru_cache(maxsize=1)
def _index() -> tuple[list[str], dict[str, float]]:
    chunks = [p.strip() for f in sorted(KNOWLEDGE.glob("*.txt")) for p in f.read_text().split("\n\n") if p.strip()]
    df: dict[str, int] = {}
    for chunk in chunks:
        for t in set(_terms(chunk)):
            df[t] = df.get(t, 0) + 1
    idf = {t: math.log((1 + len(chunks)) / (1 + n)) + 1 for t, n in df.items()}
    return chunks, idf


def _score(query_terms: set[str], text: str, idf: dict[str, float]) -> float:
    return sum(idf.get(t, 0.0) for t in query_terms & set(_terms(text)))


def retrieve(query: str, k: int = TOP_K) -> list[str]:
    chunks, idf = _index()
    q = set(_terms(query))
    ranked = sorted(range(len(chunks)), key=lambda i: (-_score(q, chunks[i], idf), i))
    return [chunks[i] for i in ranked[:k] if _score(q, chunks[i], idf) > 0]


def answer(query: str, chunks: list[str]) -> str:
    _, idf = _index()
    q = set(_terms(query))
    sentences = [s for c in chunks for s in re.split(r"(?<=[.!?])\s+", c) if s]
    best = sorted(sentences, key=lambda s: -_score(q, s, idf))[:ANSWER_SENTENCES]
    ordered = [s for s in sentences if s in best]
    return " ".join(ordered) if ordered else "I don't know."


def call_api(prompt: str, options: dict[str, Any], context: dict[str, Any]) -> dict[str, Any]:
    """evalrun/promptfoo provider entry point: returns the answer and the retrieved chunks."""
    chunks = retrieve(prompt)
    return {"output": answer(prompt, chunks), "metadata": {"retrieved": chunks}}


if __name__ == "__main__":  # try it: python rag.py "What causes a solar eclipse?"
    import sys

    q = " ".join(sys.argv[1:]) or "What causes a solar eclipse?"
    found = retrieve(q)
    print(answer(q, found))
    for i, c in enumerate(found):
        print(f"  [{i}] {c[:80]}")
