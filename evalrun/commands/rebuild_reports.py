"""`evalrun report RESULTS.jsonl -o out.html [-o out.json ...]`: rebuild reports from a results file.

After a SIGKILL (or a run without `-o`) the results file still holds every finished case; this writes any
report format from it (or from a `-o .json` report; other reports are refused, see run/store.py), with no
config and no model call. A case written twice (a resumed run) counts once, its last record wins.
"""

from __future__ import annotations

import argparse
import contextlib
from pathlib import Path

from evalrun.errors import UsageError


class _Suite:
    """What reports read of a suite when there is none: description and config files."""

    description = None
    files: list[str] = []


def run(args: argparse.Namespace) -> int:
    from evalrun import report
    from evalrun.run import store
    from evalrun.run.tally import RunOutcome, Tally

    path = Path(args.results)
    if not path.is_file():
        raise UsageError(f"no results file {args.results!r}", key="RESULTS",
                         hint="give the .jsonl results file of a run (default .evalrun/last-run.jsonl) "
                              "or its -o .json report")
    if not args.output:
        raise UsageError("give at least one -o FILE", key="--output",
                         hint=f"the format comes from the extension: {', '.join(report.FORMATS)}")
    for out in args.output:
        report.check_path(out)
    hint = f"give {store.ACCEPTED}"
    with contextlib.ExitStack() as stack:
        jsonl = store.as_jsonl(path, stack, key="RESULTS", hint=hint)
        latest: dict[str, tuple[int, dict]] = {}
        for offset, rec in store.indexed(jsonl, key="RESULTS", hint=hint, shown=path):
            latest[rec["id"]] = (offset, rec)
        tally = Tally()
        for offset, rec in latest.values():
            tally.add(rec, offset)
        if not latest:
            raise UsageError(f"{args.results!r} holds no result records", key="RESULTS")
        tally.finished = tally.started
        outcome = RunOutcome(_Suite(), tally, jsonl)  # type: ignore[arg-type]
        for out in args.output:
            report.write(out, outcome)
    print(f"Wrote {', '.join(args.output)} from {len(latest)} results in {args.results}")
    return 0
