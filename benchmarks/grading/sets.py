"""The grading benchmark's labelled sets: one registry from a set's name to its items.

Every item is `{id, set, kind, question, context, answer, label, ...}`: `kind` is the assertion that grades it
(`faithfulness` or `context-relevance`), `label` True is the positive class (faithful / relevant), `question` is
the query (None when the set has none), `answer` the output under test.

| set | kind | source | splits |
|---|---|---|---|
| qa, summarization, dialogue | faithfulness | HaluEval (data.py) | dev / test / check by row |
| relevance | context-relevance | HaluEval QA: own passage vs that of the question sharing most words (relevance.py) | as HaluEval |
| relevance-retrieved | context-relevance | HaluEval QA: own passage vs the other passage holding most of the question's words | as HaluEval |
| vitaminc | faithfulness | VitaminC claims vs Wikipedia evidence (vitaminc.py) | dev / test / check by claim |
| supportbot, supportbot-relevance | faithfulness / context-relevance | hand-written (supportbot.py) | dev = supportbot_dev.jsonl; test and check = supportbot_heldout.jsonl |
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from benchmarks.grading import data, relevance, supportbot, vitaminc

Loader = Callable[[str, int | None], Iterator[dict[str, Any]]]


def _halueval(name: str) -> Loader:
    return lambda split, limit: data.items(name, split, limit)


def _supportbot(kind: str) -> Loader:
    return lambda split, limit: supportbot.items(split, kind=kind, limit=limit)


SETS: dict[str, Loader] = {
    "qa": _halueval("qa"),
    "summarization": _halueval("summarization"),
    "dialogue": _halueval("dialogue"),
    "relevance": relevance.items,
    "relevance-retrieved": lambda split, limit: relevance.items(split, limit, by="passage"),
    "vitaminc": vitaminc.items,
    "supportbot": _supportbot("faithfulness"),
    "supportbot-relevance": _supportbot("context-relevance"),
}


def items(name: str, split: str, limit: int | None = None) -> list[dict[str, Any]]:
    """The labelled items of set `name` in `split`; `limit` caps the source rows / pairs (not the items)."""
    if name not in SETS:
        raise ValueError(f"unknown set {name!r} (sets: {', '.join(SETS)})")
    return list(SETS[name](split, limit))
