"""The learned relevance head alone (benchmarks/grading/relevance_model.py, issue 34) on the context-relevance sets, next to
the raw cosine of question and chunk (the semantic tier's signal): AUROC, balanced accuracy at a threshold, passes
per label and milliseconds per pair.

    .venv/bin/python -m benchmarks.grading.relevance_head --split dev --limit 1000
    .venv/bin/python -m benchmarks.grading.relevance_head --split test --limit 1000   # once, to report

`--threshold` (default 0.5) is the head's probability at which a chunk passes.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Iterable
from typing import Any

from benchmarks.grading import metrics, relevance, supportbot
from benchmarks.grading.relevance_model import RelevanceHead
from evalrun.grading import embeddings


def measure(head: RelevanceHead, items: Iterable[dict[str, Any]], threshold: float) -> dict[str, Any]:
    """The head's and the cosine's figures on `items` (context-relevance items with question, context, label)."""
    chosen = list(items)
    labels = [bool(i["label"]) for i in chosen]
    head.probs("warm-up", ["the model loads once"])
    t0 = time.perf_counter()
    probs = [float(head.probs(i["question"], [i["context"]])[0]) for i in chosen]
    ms = (time.perf_counter() - t0) * 1000 / max(len(chosen), 1)
    t0 = time.perf_counter()  # again, every text now cached: the head's forward alone
    for i in chosen[:200]:
        head.probs(i["question"], [i["context"]])
    head_ms = (time.perf_counter() - t0) * 1000 / max(min(len(chosen), 200), 1)
    cosine = [embeddings.similarities(i["question"], [i["context"]])[0] for i in chosen]
    passed = [p >= threshold for p in probs]
    return {"items": len(chosen), "auroc": metrics.auroc(probs, labels),
            "balanced_accuracy": metrics.balanced_accuracy(passed, labels),
            "pos_passed": f"{sum(p for p, y in zip(passed, labels, strict=True) if y)}/{sum(labels)}",
            "neg_passed": f"{sum(p for p, y in zip(passed, labels, strict=True) if not y)}/{len(labels) - sum(labels)}",
            "cosine_auroc": metrics.auroc(cosine, labels), "ms_per_pair": ms, "head_ms": head_ms}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--split", default="dev", choices=("dev", "test", "check"))
    parser.add_argument("--limit", type=int, default=1000, help="HaluEval questions (two items each)")
    parser.add_argument("--threshold", type=float, default=0.5)
    parser.add_argument("--sets", default="supportbot-relevance,relevance")
    args = parser.parse_args(argv)
    head = RelevanceHead(cache_size=20000)
    sources = {"supportbot-relevance": lambda: supportbot.items(args.split, "context-relevance"),
               "relevance": lambda: relevance.items(args.split, args.limit)}
    print(f"| set | items | head AUROC | balanced acc. @{args.threshold:.2f} | + passed | - passed | cosine AUROC "
          "| ms/pair (encoding + head) | ms/pair (head) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name in args.sets.split(","):
        r = measure(head, sources[name](), args.threshold)
        print(f"| {name} ({args.split}) | {r['items']} | {r['auroc']:.3f} | {r['balanced_accuracy']:.3f} | "
              f"{r['pos_passed']} | {r['neg_passed']} | {r['cosine_auroc']:.3f} | {r['ms_per_pair']:.1f} | {r['head_ms']:.1f} |",
              flush=True)


if __name__ == "__main__":
    main()
