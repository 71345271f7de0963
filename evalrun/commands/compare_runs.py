"""`evalrun compare A B`: what changed between two runs; `--fail-on regression` exits 100 on a regression.

Exit codes: 0 (or no --fail-on), 100 a regression beyond --tolerance with --fail-on regression, 2 usage.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from evalrun.commands.compare_args import state_of
from evalrun.errors import UsageError

EXIT_REGRESSION = 100
OUTPUTS = (".json", ".md", ".html")


def run(args: argparse.Namespace) -> int:
    from evalrun.compare import diff, load, render
    from evalrun.run.history import History

    if not 0 <= args.tolerance <= 1:
        raise UsageError("--tolerance is a score or pass-rate difference between 0 and 1", key="--tolerance")
    for out in args.output:
        if Path(out).suffix.lower() not in OUTPUTS:
            raise UsageError(f"unknown output format for {out!r}", key="--output",
                             hint=f"use one of the extensions {', '.join(OUTPUTS)}")
    history = History(state_of(args))
    a, b = load.load(args.a, history), load.load(args.b, history)
    d = diff.compare(a.records, b.records, tolerance=args.tolerance)
    data = diff.as_dict(d, {"ref": a.ref, "label": a.label, "run": a.info or None},
                          {"ref": b.ref, "label": b.label, "run": b.info or None})
    if args.format == "json":
        print(json.dumps(data, indent=2, ensure_ascii=False, default=str))
    elif args.format == "markdown":
        print(render.markdown(data), end="")
    else:
        print(render.text(data))
    for out in args.output:
        path = Path(out)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            suffix = path.suffix.lower()
            if suffix == ".json":
                path.write_text(json.dumps(data, indent=2, ensure_ascii=False, default=str), encoding="utf-8")
            elif suffix == ".md":
                path.write_text(render.markdown(data), encoding="utf-8")
            else:
                from evalrun.report import html

                html.write_diff(path, data, d)
        except OSError as e:
            raise UsageError(f"cannot write {out!r}: {e.strerror or e}", key="--output") from None
        print(f"Wrote {out}", file=sys.stderr)
    if args.fail_on == "regression" and data["summary"]["regressions"]:
        return EXIT_REGRESSION
    return 0
