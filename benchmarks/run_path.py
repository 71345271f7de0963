#!/usr/bin/env python3
"""The per-case run path in isolation: CPU µs per case of `Runner.run` over tests already in memory.

    python benchmarks/run_path.py [--rows 100000] [--runs 3]

The suite is big_suites.py's JSONL suite (echo, one prompt, contains + icontains + regex per test). The tests
are loaded and materialised first (a tuple of TestSpecs), so what is timed is only the run: expanding tests into
cases (case ids), run_case, the record, the results file write and the tally (time.process_time, one process).

Target (issue 14): <= 60 µs per case.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from big_suites import write_jsonl  # noqa: E402


def measure(config: Path, rows: int) -> float:
    """CPU µs per case of one run over the materialised suite."""
    from evalrun import config as config_pkg
    from evalrun.run.options import RunOptions
    from evalrun.run.runner import Runner

    suite = config_pkg.load([str(config)])
    suite = dataclasses.replace(suite, tests=tuple(suite.tests))
    opts = RunOptions(results_file=config.parent / "r.jsonl", progress=False)
    t = time.process_time()
    outcome = asyncio.run(Runner(suite, opts).run())
    spent = time.process_time() - t
    assert outcome.tally.total == rows, outcome.tally.total
    return spent / rows * 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        config = write_jsonl(Path(tmp), args.rows)
        for _ in range(args.runs):
            print(f"run path: {measure(config, args.rows):.1f} µs/case")


if __name__ == "__main__":
    main()
