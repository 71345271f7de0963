"""The hand-written support-bot sets: a customer-support bot's policies, answers in other words, polarity flips.

Two files beside this module, written by hand for issue 22 (not derived from any model output), each over its own
20 short policy contexts (refunds, shipping, warranty, accounts, subscriptions, returns, gift cards, privacy...):

* `supportbot_dev.jsonl`: the set to tune on;
* `supportbot_heldout.jsonl`: different contexts, different writing; read only by the benchmark (run.py), never
  looked at while tuning.

Each holds 40 `rewording` records (a faithful answer in other words than its context: synonyms, active/passive,
negation expressed differently, "30 days" as "a month" where the context supports it), 40 `flip` records (the
context's words with the meaning reversed: refundable / non-refundable, must / need not, before / after, free /
charged, no longer / still...), both graded by `faithfulness` with the context as `vars.context`, the user's
question as `vars.query` and the answer as the output; and 20 `retrieval` records (a user question, a chunk that
answers it in other words, a same-domain chunk that shares the question's words but does not answer it), graded by
`context-relevance` with an empty output (as in relevance.py).

Records: `{id, kind, type, question, context_id, context, answer, label, phenomenon}` (rewording, flip) and
`{id, kind, type, question, relevant, distractor}` (retrieval). `items()` turns a retrieval into two items.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
FILES = {"dev": HERE / "supportbot_dev.jsonl", "heldout": HERE / "supportbot_heldout.jsonl"}
KINDS = ("faithfulness", "context-relevance")


def records(which: str) -> list[dict[str, Any]]:
    """The records of `dev` or `heldout`."""
    path = FILES[which]
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError as e:
                raise ValueError(f"{path}:{n}: not valid JSON ({e.msg})") from None
    return out


def items(split: str, kind: str = "faithfulness", limit: int | None = None) -> Iterator[dict[str, Any]]:
    """Labelled items of `kind`: split `dev` reads the dev file, `test` and `check` the held-out one.

    `limit` caps the records (a retrieval record gives two items)."""
    if split not in ("dev", "test", "check") or kind not in KINDS:
        raise ValueError(f"split must be dev, test or check and kind one of {KINDS}")
    name = "supportbot" if kind == "faithfulness" else "supportbot-relevance"
    chosen = [r for r in records("dev" if split == "dev" else "heldout") if r["kind"] == kind]
    for r in chosen[:limit] if limit else chosen:
        if kind == "faithfulness":
            yield {"id": r["id"], "set": name, "kind": kind, "group": r["context_id"], "type": r["type"],
                   "question": r.get("question"), "context": r["context"], "answer": r["answer"],
                   "label": r["label"]}
            continue
        for relevant in (True, False):
            yield {"id": f"{r['id']}-{'r' if relevant else 'd'}", "set": name, "kind": kind, "group": r["id"],
                   "type": "relevant" if relevant else "distractor", "question": r["question"],
                   "context": r["relevant" if relevant else "distractor"], "answer": "", "label": relevant}
