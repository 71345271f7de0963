"""The learned entailment head alone (evalrun/grading/entailment.py, issue 34) on the benchmark's sets.

    .venv/bin/python -m benchmarks.grading.head --split test --sets vitaminc,supportbot --limit 1000

Per item: the answer's claims (its sentences, segment.sentences) each against its best premise (the context
sentence with the highest p_supported; VitaminC's evidence is one premise, as trained); the item's score is the
mean over claims of that p_supported, its verdict `supported` when every claim's argmax is supported. Prints
AUROC of the score, balanced accuracy of the verdict, pass counts per item type, and the time per pair of the
numpy head (token states cached) and per item end to end (encoding included).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.grading import metrics, sets
from evalrun.grading.builtin.segment import sentences
from evalrun.grading.entailment import EntailmentHead, head_probs


def score(head: EntailmentHead, item: dict[str, Any], timing: dict[str, float]) -> dict[str, Any]:
    """The item's score, verdict and per-claim best rows."""
    premises = [item["context"]] if item["set"] == "vitaminc" else (sentences(item["context"]) or [item["context"]])
    claims = sentences(item["answer"]) or [item["answer"]]
    rows = []
    for claim in claims:
        *states, hyp = head.states([*premises, claim])
        started = time.perf_counter()
        probs = head_probs(head.weights, states, hyp)
        timing["head_s"] += time.perf_counter() - started
        timing["pairs"] += len(premises)
        rows.append(probs[int(probs[:, 0].argmax())])
    best = np.array(rows)
    return {"score": float(best[:, 0].mean()), "supported": bool((best.argmax(1) == 0).all()),
            "refuted": bool((best.argmax(1) == 1).any())}


def run(name: str, split: str, limit: int | None) -> dict[str, Any]:
    items = sets.items(name, split, limit)
    head = EntailmentHead()
    timing = {"head_s": 0.0, "pairs": 0.0}
    started = time.perf_counter()
    results = [score(head, it, timing) for it in items]
    wall = time.perf_counter() - started
    labels = [bool(it["label"]) for it in items]
    by_type: dict[str, list[int]] = {}
    for it, r in zip(items, results, strict=True):
        counts = by_type.setdefault(f"{it.get('type') or ('faithful' if it['label'] else 'hallucinated')}", [0, 0, 0])
        counts[0] += r["supported"]
        counts[1] += r["refuted"]
        counts[2] += 1
    return {"set": name, "split": split, "items": len(items), "positives": sum(labels),
            "auroc": metrics.auroc([r["score"] for r in results], labels),
            "balanced_accuracy": metrics.balanced_accuracy([r["supported"] for r in results], labels),
            "supported_refuted_total_by_type": by_type,
            "ms_per_pair_head": 1000 * timing["head_s"] / max(timing["pairs"], 1),
            "items_per_s": len(items) / wall, "scores": [r["score"] for r in results]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--split", default="dev")
    ap.add_argument("--sets", default="vitaminc,supportbot")
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    out = []
    for name in args.sets.split(","):
        f = run(name, args.split, args.limit)
        out.append(f)
        print(json.dumps({k: (round(v, 4) if isinstance(v, float) else v) for k, v in f.items() if k != "scores"}),
              flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
