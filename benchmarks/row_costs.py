#!/usr/bin/env python3
"""What a streamed test row costs: the checking pass and the run pass's row -> TestSpec, in CPU µs per row.

    python benchmarks/row_costs.py [--rows 100000] [--runs 3]

The suite is big_suites.py's JSONL suite (echo provider, one prompt, each row {vars: {question, topic}, assert:
[contains, icontains, regex]}). Measured in one process, CPU time (time.process_time):

- floor     reading the lines and parsing each with evalrun.jsonfast.loads (what any reader pays)
- check     `config.load`: every row parsed, schema-checked, its specs built, defaultTest merged, its templates
            checked and its cases counted (config/suite.py build_suite)
- run pass  one iteration of `suite.tests` after loading: each row parsed again and made a TestSpec (what the run
            does before expanding a test into cases; config/tests.py TestFile.specs)

Targets (issue 14, per row of this suite): check <= 25 µs, run pass <= 10 µs.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from big_suites import write_jsonl  # noqa: E402


def _floor(path: Path) -> float:
    from evalrun.jsonfast import loads

    t = time.process_time()
    with open(path, encoding="utf-8") as f:
        for line in f:
            loads(line)
    return time.process_time() - t


def measure(config: Path, rows: int) -> tuple[float, float, float]:
    """(floor, check, run pass) in µs per row."""
    from evalrun import config as config_pkg

    floor = _floor(config.parent / "tests.jsonl")
    t = time.process_time()
    suite = config_pkg.load([str(config)])
    check = time.process_time() - t
    t = time.process_time()
    n = sum(1 for _ in suite.tests)
    run = time.process_time() - t
    assert n == rows
    return floor / rows * 1e6, check / rows * 1e6, run / rows * 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        config = write_jsonl(Path(tmp), args.rows)
        results = [measure(config, args.rows) for _ in range(args.runs)]
    for name, i in (("floor", 0), ("check", 1), ("run pass", 2)):
        values = sorted(r[i] for r in results)
        print(f"{name:9} {values[0]:6.1f} - {values[-1]:6.1f} µs/row  ({args.rows:,} rows, {args.runs} runs)")


if __name__ == "__main__":
    main()
