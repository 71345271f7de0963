"""`evalrun merge RESULTS... [-o FILE]`: the shards of a run (`eval --shard K/N`) as one report and exit code.

The exit code follows `evalrun eval`'s rules (0 all passed, 100 a case failed or errored, --pass-rate-threshold,
EVALRUN_FAILED_TEST_EXIT_CODE), computed over the merged cases.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from evalrun.errors import UsageError

DEFAULT_MERGED = Path(".evalrun") / "merged.jsonl"


def run(args: argparse.Namespace) -> int:
    from evalrun import report
    from evalrun.commands.evaluate import check_env, exit_code
    from evalrun.report import console
    from evalrun.run.split import merge

    check_env(args.pass_rate_threshold)
    if args.pass_rate_threshold is not None and not 0 <= args.pass_rate_threshold <= 100:
        raise UsageError("--pass-rate-threshold is a percentage between 0 and 100")
    for path in args.output:
        report.check_path(path)
    out = Path(args.results_file) if args.results_file else DEFAULT_MERGED
    outcome = merge([Path(p) for p in args.results], out)
    if not args.no_table:
        print(console.table(outcome))
    for path in args.output:
        report.write(path, outcome)
    print(console.summary(outcome))
    if args.output:
        print("Wrote " + ", ".join(args.output))
    print(f"Results file: {out}")
    return exit_code(outcome.summary, args.pass_rate_threshold)
