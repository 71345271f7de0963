"""`evalrun calibrate`: a labels template from a run (`--template RESULTS -o labels.csv [--sample N --seed S]`; from
two runs, `--template RESULTS_A RESULTS_B`, only where their graders disagree),
a grader's agreement with those labels and a cross-validated threshold (`RESULTS --labels FILE [--json]
[-o calibration.json] [-o page.html]`), or two graders' agreement on one suite (`RESULTS_A RESULTS_B`)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from evalrun.errors import UsageError

TEMPLATE_SUFFIXES = (".csv", ".jsonl")
OUTPUT_SUFFIXES = (".json", ".html")
USAGE = ("`evalrun calibrate --template RESULTS -o labels.csv`, then `evalrun calibrate RESULTS --labels labels.csv`,"
         " or `evalrun calibrate RESULTS_A RESULTS_B`")


def _records(path: str) -> list[dict[str, Any]]:
    from evalrun.run import store

    return list(store.records(Path(path)))


def run(args: argparse.Namespace) -> int:
    if args.sample is not None and args.sample < 1:
        raise UsageError("--sample must be at least 1", key="--sample", hint="the number of rows to label, e.g. 50")
    if args.min_labels < 2:
        raise UsageError("--min-labels must be at least 2", key="--min-labels")
    if args.template:
        return _template(args)
    if args.labels:
        return _with_labels(args)
    if len(args.results) == 2:
        return _two_graders(args)
    raise UsageError("nothing to do: give --template, --labels FILE, or two results files", key="calibrate",
                     hint=USAGE)


def _one(args: argparse.Namespace, what: str) -> str:
    if len(args.results) != 1:
        raise UsageError(f"{what} reads one results file, not {len(args.results)}", key="RESULTS", hint=USAGE)
    return str(args.results[0])


def _template(args: argparse.Namespace) -> int:
    from evalrun.calibration import analysis, labels

    if len(args.results) > 2:
        raise UsageError(f"--template reads one results file (or two: their disagreements), not "
                         f"{len(args.results)}", key="RESULTS", hint=USAGE)
    results = str(args.results[0])
    if len(args.output) != 1 or Path(args.output[0]).suffix.lower() not in TEMPLATE_SUFFIXES:
        raise UsageError("--template writes one labels file: give -o FILE.csv or -o FILE.jsonl", key="--output",
                         hint="e.g. `evalrun calibrate --template RESULTS -o labels.csv --sample 50`")
    records = _records(results)
    rows = labels.template_rows(records)
    if not rows:
        raise UsageError(f"{results!r} has no graded assertion with a score to label", key="RESULTS",
                         hint="calibrate reads a run with graded assertions (faithfulness, context-relevance, ...)")
    if len(args.results) == 2:  # label only where two graders disagree (A's rows: its claims, score, verdict)
        other = str(args.results[1])
        compared = analysis.compare_graders(records, _records(other), seed=args.seed)["metrics"]
        differ = {(d["case"], m["metric"]) for m in compared for d in m["disagreements"]}
        rows = [r for r in rows if (r["case"], r["assertion"]) in differ]
        if not rows:
            print(f"{results} and {other} agree on every paired verdict: nothing to label")
            return 0
    chosen = labels.sample(rows, args.sample, args.seed)
    out = Path(args.output[0])
    try:
        labels.write_template(chosen, out)
    except OSError as e:
        raise UsageError(f"cannot write {str(out)!r}: {e.strerror or e}", key="--output") from None
    sampled = f" (sampled by score from {len(rows)}, seed {args.seed})" if len(chosen) < len(rows) else ""
    if len(args.results) == 2:
        sampled += f" where {args.results[0]} and {args.results[1]} disagree"
    print(f"Wrote {len(chosen)} rows{sampled} to {out}: fill the `human` column with pass or fail (and `note` "
          f"if you like), then run `evalrun calibrate {results} --labels {out}`")
    return 0


def _check_outputs(outputs: list[str]) -> None:
    for out in outputs:
        if Path(out).suffix.lower() not in OUTPUT_SUFFIXES:
            raise UsageError(f"unknown output format for {out!r}", key="--output",
                             hint=".json: a calibration file a suite can use; .html: a page of the figures")


def _write(outputs: list[str], data: dict[str, Any], calibration: dict[str, Any] | None) -> None:
    from evalrun.calibration import page

    for out in outputs:
        path = Path(out)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            if path.suffix.lower() == ".html":
                page.write(path, data)
            else:
                path.write_text(json.dumps(calibration if calibration is not None else data, indent=2,
                                           ensure_ascii=False) + "\n", encoding="utf-8")
        except OSError as e:
            raise UsageError(f"cannot write {out!r}: {e.strerror or e}", key="--output") from None
        print(f"Wrote {out}", file=sys.stderr)


def _with_labels(args: argparse.Namespace) -> int:
    from evalrun.calibration import analysis, labels, stored, text
    from evalrun.config.calibration import document
    from evalrun.grading.select import grader_identity

    results = _one(args, "--labels")
    _check_outputs(args.output)
    found, empty, digest = labels.read_labels(Path(args.labels))
    if not found:
        raise UsageError(f"{args.labels}: no row has `human` filled in ({empty} empty)", key="--labels",
                         hint="write pass or fail in the `human` column of the rows you have judged")
    data = analysis.calibrate(labels.match(found, _records(results)), seed=args.seed,
                              min_per_class=args.min_labels)
    data = {"results": results, "labels": {"file": args.labels, "sha256": digest, "rows": len(found) + empty,
                                           "empty": empty}, **data}
    calibration = document(data["metrics"], {m["grader"]: grader_identity(m["grader"]) for m in data["metrics"]},
                           results=results, labels=args.labels, labels_sha256=digest,
                           created=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
    print(json.dumps(data, indent=2, ensure_ascii=False) if args.json else text.labels_text(data))
    kept = stored.keep(Path(results), data)
    if kept is not None:
        from evalrun.config.files import display_path

        print(f"Kept for `evalrun view`: {display_path(kept)}", file=sys.stderr)
    _write(args.output, data, calibration)
    return 0


def _two_graders(args: argparse.Namespace) -> int:
    from evalrun.calibration import analysis, text

    _check_outputs(args.output)
    a, b = args.results
    data = {"a": a, "b": b, **analysis.compare_graders(_records(a), _records(b), seed=args.seed)}
    if not data["metrics"]:
        raise UsageError(f"{a!r} and {b!r} share no graded assertion", key="RESULTS",
                         hint="give two runs of the same suite, each graded by another grader (--grader)")
    print(json.dumps(data, indent=2, ensure_ascii=False) if args.json else text.graders_text(data))
    _write(args.output, data, None)
    return 0
