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
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.grading import metrics, sets
from evalrun.grading.builtin.segment import sentences
from evalrun.grading.entailment import EntailmentHead, head_probs


def best_rows(item: dict[str, Any], probs: Callable[[list[str], str], np.ndarray]) -> np.ndarray:
    """Per claim of the item's answer (its sentences), the [p_supported, p_refuted, p_nei] row of its best premise
    (the context sentence with the highest p_supported; VitaminC's evidence is one premise, as trained); `probs`
    gives one row per premise against a claim."""
    premises = [item["context"]] if item["set"] == "vitaminc" else (sentences(item["context"]) or [item["context"]])
    rows = []
    for claim in sentences(item["answer"]) or [item["answer"]]:
        p = probs(premises, claim)
        rows.append(p[int(p[:, 0].argmax())])
    return np.array(rows)


def verdicts(items: list[dict[str, Any]], probs: Callable[[list[str], str], np.ndarray]) -> tuple[list[float], list[bool]]:
    """Each item's score (the mean over claims of the best p_supported) and verdict (every claim's argmax is
    `supported`)."""
    best = [best_rows(it, probs) for it in items]
    return [float(b[:, 0].mean()) for b in best], [bool((b.argmax(1) == 0).all()) for b in best]


def passed_by_type(items: list[dict[str, Any]], passed: list[bool]) -> dict[str, list[int]]:
    """[passed, total] per item type (`+` / `-` for sets without types)."""
    out: dict[str, list[int]] = {}
    for it, ok in zip(items, passed, strict=True):
        counts = out.setdefault(it.get("type") or ("+" if it["label"] else "-"), [0, 0])
        counts[0] += ok
        counts[1] += 1
    return out


def summary(name: str, split: str, items: list[dict[str, Any]], scores: list[float], passed: list[bool]) -> dict[str, Any]:
    """AUROC of the scores, balanced accuracy of the verdicts and passes per type, as this module prints them."""
    labels = [bool(it["label"]) for it in items]
    return {"set": name, "split": split, "items": len(items), "auroc": round(metrics.auroc(scores, labels), 4),
            "balanced_accuracy": round(metrics.balanced_accuracy(passed, labels), 4),
            "passed_by_type": passed_by_type(items, passed)}


def run(name: str, split: str, limit: int | None) -> dict[str, Any]:
    items = sets.items(name, split, limit)
    head = EntailmentHead()
    timing = {"head_s": 0.0, "pairs": 0.0}

    def probs(premises: list[str], claim: str) -> np.ndarray:
        *states, hyp = head.states([*premises, claim])
        started = time.perf_counter()
        out = head_probs(head.weights, states, hyp)
        timing["head_s"] += time.perf_counter() - started
        timing["pairs"] += len(premises)
        return out

    started = time.perf_counter()
    scores, passed = verdicts(items, probs)
    wall = time.perf_counter() - started
    return {**summary(name, split, items, scores, passed), "positives": sum(bool(it["label"]) for it in items),
            "ms_per_pair_head": 1000 * timing["head_s"] / max(timing["pairs"], 1),
            "items_per_s": len(items) / wall, "scores": scores}


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
