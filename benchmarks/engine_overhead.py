#!/usr/bin/env python3
"""Engine overhead: `evalrun eval` on 10,000 cases against promptfoo 0.121.20 on the same file, same run.

    python benchmarks/engine_overhead.py [--cases 10000] [--runs 1] [--skip-peer]

The config: 10,000 cases, the echo provider, one prompt, and 3 deterministic assertions per test (contains,
icontains, regex); `--shape matrix` (default) has 1,000 tests whose `question` var lists 10 values, `--shape flat`
has 10,000 tests written out one by one (a 50,000-line YAML file). Both tools run as subprocesses under /usr/bin/time -v (wall time and peak RSS,
process start and config loading included), with their default concurrency (4), no table, no progress bar.
evalrun streams every result to its JSONL results file; promptfoo writes its results database as it does by
default. Targets: evalrun <= 1/10 of promptfoo's wall time and <= 1/5 of its peak memory.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROMPTFOO = Path("/work/peer/node_modules/.bin/promptfoo")
PEER_ENV = {"PROMPTFOO_DISABLE_TELEMETRY": "1", "PROMPTFOO_DISABLE_UPDATE": "1", "PROMPTFOO_DISABLE_SHARING": "1"}


def write_config(folder: Path, n: int, shape: str = "matrix") -> Path:
    """matrix: n/10 tests whose `question` lists 10 values; flat: n tests written out one by one."""
    lines = ["description: engine overhead benchmark", "providers: [echo]",
             "prompts: ['Answer {{question}} about {{topic}}']", "tests:"]
    per_test = 10 if shape == "matrix" else 1
    for i in range(n // per_test):
        question = (f"'question number {i}'" if per_test == 1 else
                    "[" + ", ".join(f"'question number {i}-{j}'" for j in range(per_test)) + "]")
        lines += [f"  - vars: {{question: {question}, topic: 'topic {i % 17}'}}", "    assert:",
                  "      - {type: contains, value: 'number'}", "      - {type: icontains, value: 'TOPIC'}",
                  "      - {type: regex, value: 'number \\d+'}"]
    path = folder / "promptfooconfig.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def timed(cmd: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float, int, float]:
    """(wall seconds, peak RSS MB, exit code, CPU seconds = user + sys) from /usr/bin/time -v."""
    proc = subprocess.run(["/usr/bin/time", "-v", *cmd], capture_output=True, text=True, env=env, cwd=cwd)
    err = proc.stderr
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (?:(\d+):)?(\d+):([\d.]+)", err)
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", err)
    cpu = sum(float(m) for m in re.findall(r"(?:User|System) time \(seconds\): ([\d.]+)", err))
    if not wall or not rss:
        raise SystemExit(f"{' '.join(cmd)}: no timing\n{proc.stdout[-2000:]}\n{err[-2000:]}")
    seconds = int(wall.group(1) or 0) * 3600 + int(wall.group(2)) * 60 + float(wall.group(3))
    return seconds, int(rss.group(1)) / 1024.0, proc.returncode, cpu


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=1, help="runs per tool (best wall time, max RSS reported)")
    ap.add_argument("--skip-peer", action="store_true", help="only run evalrun")
    ap.add_argument("--shape", choices=["matrix", "flat"], default="matrix",
                    help="matrix: 1,000 tests x 10 var values (default); flat: 10,000 tests written out")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        cfg = write_config(folder, args.cases, args.shape)
        env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
        env.pop("CI", None)
        ev_cmd = [sys.executable, "-m", "evalrun", "eval", str(cfg), "--no-table", "--no-progress-bar",
                  "--results-file", str(folder / "results.jsonl")]
        runs = [timed(ev_cmd, env, folder) for _ in range(args.runs)]
        ev_wall, ev_rss, ev_cpu = min(r[0] for r in runs), max(r[1] for r in runs), min(r[3] for r in runs)
        lines = len((folder / "results.jsonl").read_bytes().splitlines())
        if lines != args.cases or runs[0][2] != 0:
            raise SystemExit(f"evalrun: {lines} results, exit {runs[0][2]}")
        print(f"shape {args.shape}")
        print(f"evalrun   {args.cases} cases: wall {ev_wall:6.2f} s  CPU {ev_cpu:6.2f} s  peak RSS {ev_rss:7.1f} MB")
        if args.skip_peer or not PROMPTFOO.exists():
            return 0
        peer_env = {**env, **PEER_ENV, "PROMPTFOO_CONFIG_DIR": str(folder / ".promptfoo")}
        pf_cmd = [str(PROMPTFOO), "eval", "-c", str(cfg), "--no-table", "--no-progress-bar"]
        pruns = [timed(pf_cmd, peer_env, folder) for _ in range(args.runs)]
        pf_wall, pf_rss, pf_cpu = min(r[0] for r in pruns), max(r[1] for r in pruns), min(r[3] for r in pruns)
        print(f"promptfoo {args.cases} cases: wall {pf_wall:6.2f} s  CPU {pf_cpu:6.2f} s  peak RSS {pf_rss:7.1f} MB "
              f"(exit {pruns[0][2]})")
        print(f"ratio: wall {ev_wall / pf_wall:.3f} (target <= 0.100), CPU {ev_cpu / pf_cpu:.3f}, "
              f"memory {ev_rss / pf_rss:.3f} (target <= 0.200)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
