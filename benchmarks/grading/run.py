"""Grading benchmark: how well graded assertions separate faithful from hallucinated answers on public labelled data.

Each HaluEval item (data.py) becomes one evalrun test, run through the public API exactly as a user's suite runs:
`prompts: ['{{answer}}']`, the `echo` provider, vars `{answer, context, query}`, and the assertions `faithfulness`
and `hallucination` at their default thresholds. Reported per set: AUROC of each assertion's score (hallucination
negated: lower is better), balanced accuracy of its pass/fail verdict at the default threshold, the token-overlap
baseline's AUROC on the same items (metrics.py), items with no claims, errors, and items per second.

Usage:
  python -m benchmarks.grading.run [--split test] [--sets qa,dialogue,summarization] [--rows N] [--grader MODEL]
Splits: `dev` was tuned on (fit.py), `test` is the report split (rows 0-4999), `check` is rows 5000+ (an
independent check, never used while tuning).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.grading import data, metrics

ASSERTIONS = ("faithfulness", "hallucination")


def write_suite(items: list[dict[str, Any]], folder: Path, grader: str | dict[str, Any] | None = None) -> Path:
    """A config and a JSONL tests file for `items`; returns the config's path."""
    with open(folder / "tests.jsonl", "w", encoding="utf-8") as f:
        for it in items:
            vars_: dict[str, Any] = {"answer": it["answer"], "context": it["context"]}
            if it["question"]:
                vars_["query"] = it["question"]
            f.write(json.dumps({"description": it["id"], "vars": vars_,
                                "metadata": {"faithful": it["faithful"]}}) + "\n")
    config = {"description": "HaluEval grading benchmark", "prompts": ["{{answer}}"], "providers": ["echo"],
              "defaultTest": {"assert": [{"type": a} for a in ASSERTIONS]}, "tests": "file://tests.jsonl"}
    if grader:
        config["grader"] = grader
    path = folder / "evalrun.yaml"
    path.write_text(json.dumps(config), encoding="utf-8")  # JSON is YAML
    return path


def run_items(items: list[dict[str, Any]], grader: str | dict[str, Any] | None = None,
              concurrency: int | None = None,
              ) -> tuple[list[dict[str, Any]], float]:
    """Result records of `items` (in order) and the run's wall time in seconds."""
    from evalrun.api import evaluate

    with tempfile.TemporaryDirectory() as tmp:
        config = write_suite(items, Path(tmp), grader)
        started = time.perf_counter()
        outcome = evaluate(config, use_cache=False, results_file=Path(tmp) / "results.jsonl",
                           max_concurrency=concurrency)
        elapsed = time.perf_counter() - started
        records = list(outcome.iter_results())
    return records, elapsed


def figures(items: list[dict[str, Any]], records: list[dict[str, Any]]) -> dict[str, Any]:
    """AUROC and balanced accuracy per assertion, the baseline, no-claim and error counts."""
    labels = [it["faithful"] for it in items]
    out: dict[str, Any] = {"n": len(items), "baseline_auroc": metrics.auroc(
        [metrics.token_overlap(it["answer"], it["context"]) for it in items], labels)}
    for k, name in enumerate(ASSERTIONS):
        results = [r["assertions"][k] for r in records]
        errors = sum(bool(a.get("error")) for a in results)
        # no claims -> no score (the assertion passes): rank as fully faithful
        scores = [a["score"] if a["score"] is not None else (1.0 if name == "faithfulness" else 0.0)
                  for a in results]
        if name == "hallucination":
            scores = [-s for s in scores]
        out[name] = {"auroc": metrics.auroc(scores, labels),
                     "balanced_accuracy": metrics.balanced_accuracy([bool(a["pass"]) for a in results], labels),
                     "no_claims": sum(a["score"] is None and not a.get("error") for a in results),
                     "errors": errors}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--split", choices=data.SPLITS, default="test")
    ap.add_argument("--sets", default=",".join(data.SETS))
    ap.add_argument("--rows", type=int, default=None, help="rows per set (2 items each; default: the whole split)")
    ap.add_argument("--grader", default=None, help="grader id (default: builtin)")
    ap.add_argument("-j", "--concurrency", type=int, default=None)
    ap.add_argument("--json", default=None, help="also write the figures to this JSON file")
    args = ap.parse_args(argv)
    report = {}
    print(f"split {args.split}, grader {args.grader or 'builtin'}")
    print(f"{'set':14}{'n':>6}  {'faith AUROC':>11} {'BA@thr':>7}  {'halluc AUROC':>12} {'BA@thr':>7}  "
          f"{'baseline':>8} {'no claims':>9} {'errors':>6} {'items/s':>8}")
    for name in args.sets.split(","):
        items = list(data.items(name, args.split, args.rows))
        records, elapsed = run_items(items, args.grader, args.concurrency)
        f = figures(items, records)
        f["items_per_s"] = len(items) / elapsed
        report[name] = f
        fa, ha = f["faithfulness"], f["hallucination"]
        print(f"{name:14}{f['n']:>6}  {fa['auroc']:>11.3f} {fa['balanced_accuracy']:>7.3f}  {ha['auroc']:>12.3f} "
              f"{ha['balanced_accuracy']:>7.3f}  {f['baseline_auroc']:>8.3f} {fa['no_claims']:>9} "
              f"{fa['errors'] + ha['errors']:>6} {f['items_per_s']:>8.0f}")
        sys.stdout.flush()
    sets = [report[s] for s in report]
    mean_gap = sum(r["faithfulness"]["auroc"] - r["baseline_auroc"] for r in sets) / len(sets)
    print(f"mean faithfulness AUROC - baseline: {mean_gap:+.3f}")
    if args.json:
        Path(args.json).write_text(json.dumps({"split": args.split, "grader": args.grader or "builtin",
                                               "sets": report}, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
