"""Grading benchmark: how well graded assertions separate the classes of public and hand-written labelled sets.

Each item (sets.py) becomes one evalrun test, run through the public API exactly as a user's suite runs:
`prompts: ['{{answer}}']`, the `echo` provider, vars `{answer, context, query}`, and the set's assertion
(`faithfulness` or `context-relevance`) at its default threshold. Reported per set, as a markdown table: AUROC
of the assertion's score (positive = faithful / relevant), the token-overlap baseline's AUROC on the same items
(metrics.py), balanced accuracy of the pass/fail verdict at the default threshold, how many items of each label
passed, items with no score (no claims: passes, ranked as fully faithful), errors, and items per second through
the whole engine (config load, expansion, provider, grading, results written to disk).

Usage:
  python -m benchmarks.grading.run [--split test] [--sets qa,relevance,...] [--limit N] [--grader ID]
Splits: `dev` is for tuning, `test` is the report split, `check` the independent check (see each set's module;
support-bot sets: dev = supportbot_dev.jsonl, test and check = supportbot_heldout.jsonl).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.grading import data, metrics, sets

#: default order of a report (every set)
DEFAULT_SETS = ",".join(sets.SETS)


def write_suite(items: list[dict[str, Any]], folder: Path, grader: str | dict[str, Any] | None = None) -> Path:
    """A config and a JSONL tests file for `items` (each graded by its own `kind`); returns the config's path."""
    with open(folder / "tests.jsonl", "w", encoding="utf-8") as f:
        for it in items:
            vars_: dict[str, Any] = {"answer": it["answer"], "context": it["context"]}
            if it["question"]:
                vars_["query"] = it["question"]
            f.write(json.dumps({"description": it["id"], "vars": vars_, "assert": [{"type": it["kind"]}],
                                "metadata": {"label": it["label"]}}) + "\n")
    config: dict[str, Any] = {"description": "grading benchmark", "prompts": ["{{answer}}"], "providers": ["echo"],
                              "tests": "file://tests.jsonl"}
    if grader:
        config["grader"] = grader
    path = folder / "evalrun.yaml"
    path.write_text(json.dumps(config), encoding="utf-8")  # JSON is YAML
    return path


def run_items(items: list[dict[str, Any]], grader: str | dict[str, Any] | None = None,
              concurrency: int | None = None) -> tuple[list[dict[str, Any]], float]:
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


def baseline(item: dict[str, Any]) -> float:
    """Token overlap of what is judged against the context: the answer (faithfulness) or the query (relevance)."""
    judged = item["question"] if item["kind"] == "context-relevance" else item["answer"]
    return metrics.token_overlap(judged or "", item["context"])


def figures(items: list[dict[str, Any]], records: list[dict[str, Any]]) -> dict[str, Any]:
    """AUROC, baseline AUROC, balanced accuracy and pass counts per label (errored items left out of all four)."""
    kept: list[tuple[bool, float, bool, float]] = []  # label, score, passed, baseline
    by_type: dict[str, list[int]] = {}  # item type -> [passed, total]
    errors, no_score = [], 0
    for it, rec in zip(items, records, strict=True):
        a = rec["assertions"][0] if rec.get("assertions") else {}
        if rec.get("status") == "error" or a.get("error") or "pass" not in a:
            errors.append(f"{it['id']}: {a.get('error') or rec.get('error') or 'no assertion result'}")
            continue
        score = a.get("score")
        if score is None:  # no claims: the assertion passes with no score; rank it as fully faithful
            no_score += 1
            score = 1.0
        kept.append((it["label"], float(score), bool(a["pass"]), baseline(it)))
        if it.get("type"):
            counts = by_type.setdefault(f"{it['type']} ({'+' if it['label'] else '-'})", [0, 0])
            counts[0] += bool(a["pass"])
            counts[1] += 1
    labels = [k[0] for k in kept]
    pos = [k for k in kept if k[0]]
    neg = [k for k in kept if not k[0]]
    return {"n": len(items), "positives": len(pos), "negatives": len(neg),
            "auroc": metrics.auroc([k[1] for k in kept], labels),
            "baseline_auroc": metrics.auroc([k[3] for k in kept], labels),
            "balanced_accuracy": metrics.balanced_accuracy([k[2] for k in kept], labels),
            "positives_passed": sum(k[2] for k in pos), "negatives_passed": sum(k[2] for k in neg),
            "no_score": no_score, "errors": len(errors), "error_samples": errors[:3], "passed_by_type": by_type}


HEADER = ("| set | kind | items (+/-) | AUROC | baseline AUROC | balanced acc. @default | + passed | - passed "
          "| no score | errors | items/s |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")


def table_row(name: str, kind: str, f: dict[str, Any]) -> str:
    """One markdown row of `figures` output (plus items_per_s)."""
    return (f"| {name} | {kind} | {f['n']} ({f['positives']}/{f['negatives']}) | {f['auroc']:.3f} "
            f"| {f['baseline_auroc']:.3f} | {f['balanced_accuracy']:.3f} "
            f"| {f['positives_passed']}/{f['positives']} | {f['negatives_passed']}/{f['negatives']} "
            f"| {f['no_score']} | {f['errors']} | {f['items_per_s']:.0f} |")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--split", choices=data.SPLITS, default="test")
    ap.add_argument("--sets", default=DEFAULT_SETS, help=f"comma-separated (default: all: {DEFAULT_SETS})")
    ap.add_argument("--limit", "--rows", type=int, default=None,
                    help="source rows / pairs per set (about 2 items each; default: the whole split)")
    ap.add_argument("--grader", default=None, help="grader id, e.g. openai:gpt-4o-mini (default: builtin)")
    ap.add_argument("-j", "--concurrency", type=int, default=None)
    ap.add_argument("--json", default=None, help="also write the figures to this JSON file")
    args = ap.parse_args(argv)
    names = [s for s in args.sets.split(",") if s]
    unknown = [s for s in names if s not in sets.SETS]
    if unknown:
        ap.error(f"unknown set(s) {', '.join(unknown)}; sets: {DEFAULT_SETS}")
    report: dict[str, Any] = {}
    print(f"split {args.split}, grader {args.grader or 'builtin'}, limit {args.limit or 'none'}\n")
    print(HEADER)
    for name in names:
        items = sets.items(name, args.split, args.limit)
        records, elapsed = run_items(items, args.grader, args.concurrency)
        f = figures(items, records)
        f["items_per_s"] = len(items) / elapsed if elapsed else float("nan")
        f["seconds"] = elapsed
        report[name] = f
        print(table_row(name, items[0]["kind"] if items else "-", f))
        sys.stdout.flush()
    breakdown = [f"{name}: " + ", ".join(f"{t} {p}/{n} passed" for t, (p, n) in sorted(f["passed_by_type"].items()))
                 for name, f in report.items() if f["passed_by_type"]]
    if breakdown:
        print("\nBy item type:\n" + "\n".join(f"- {line}" for line in breakdown))
    for name, f in report.items():
        for sample in f["error_samples"]:
            print(f"error in {name}: {sample}", file=sys.stderr)
    if args.json:
        Path(args.json).write_text(json.dumps({"split": args.split, "grader": args.grader or "builtin",
                                               "limit": args.limit, "sets": report}, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
