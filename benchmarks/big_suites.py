#!/usr/bin/env python3
"""Big flat suites: `evalrun eval` / `validate` on test files of 10k-100k rows, next to promptfoo and the floor.

    python benchmarks/big_suites.py [--only NAME ...] [--skip-peer] [--runs 1] [--peer PATH]

Every suite: the echo provider, one prompt, 3 deterministic assertions per test (contains, icontains, regex),
default concurrency, no table, no progress bar. Each tool runs as a subprocess under /usr/bin/time -v (process
start and config loading included). Suites (NAME):

- jsonl10k  `eval`, 10,000 tests in a JSONL file (promptfoo side by side)
- csv10k    `eval`, 10,000 rows of a CSV file with `__expected1..3` columns (promptfoo side by side)
- jsonl100k `eval`, 100,000 tests in a JSONL file; `floor`: reading the same lines with json.loads; then the
            same run with `--workers N` for each N of --workers (default 1 2), memory summed over the processes
- json10k / yaml10k  `validate`, 10,000 inline tests in a `.json` / YAML config
- million   `eval`, 1,000 tests x 1,000 var values (1,000,000 cases) as rows of a JSONL file (streamed);
            `million-yaml`: the same tests inline in the YAML config (read whole, every value with its line:
            memory grows with the file; big suites belong in JSONL/CSV); neither runs unless named
- flatness  in-process tracemalloc peaks of loading and running 5k / 20k / 80k-row JSONL files (not run unless
            named): flat peaks mean the rows are streamed, not held; `flatness-yaml` / `flatness-json`: the same
            tests as a list in a `file://` YAML / JSON tests file (read whole: peaks grow with the file)

Targets (issue 14): 10k JSONL/CSV wall <= 0.1x and peak memory <= 0.2x promptfoo's; 100k JSONL <= 10 s and
<= 100 MB; 10k inline tests validate in <= 1 s; 1,000,000 cases in < 100 MB.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from engine_overhead import PEER_ENV, timed  # noqa: E402

PEERS = (Path("/work/peer/node_modules/.bin/promptfoo"), Path("/tmp/i11peer/node_modules/.bin/promptfoo"))
ASSERTS = [{"type": "contains", "value": "number"}, {"type": "icontains", "value": "TOPIC"},
           {"type": "regex", "value": "number \\d+"}]
HEAD = "description: big suite benchmark\nproviders: [echo]\nprompts: ['Answer {{question}} about {{topic}}']\n"


def write_jsonl(folder: Path, n: int) -> Path:
    with open(folder / "tests.jsonl", "w", encoding="utf-8") as f:
        for i in range(n):
            f.write(json.dumps({"vars": {"question": f"question number {i}", "topic": f"topic {i % 17}"},
                                "assert": ASSERTS}) + "\n")
    path = folder / "promptfooconfig.yaml"
    path.write_text(HEAD + "tests: file://tests.jsonl\n", encoding="utf-8")
    return path


def write_csv(folder: Path, n: int) -> Path:
    with open(folder / "tests.csv", "w", encoding="utf-8", newline="") as f:
        w = csv.writer(f)
        w.writerow(["question", "topic", "__expected1", "__expected2", "__expected3"])
        for i in range(n):
            w.writerow([f"question number {i}", f"topic {i % 17}", "contains:number", "icontains:TOPIC",
                        "regex:number \\d+"])
    path = folder / "promptfooconfig.yaml"
    path.write_text(HEAD + "tests: file://tests.csv\n", encoding="utf-8")
    return path


def write_inline(folder: Path, n: int, fmt: str) -> Path:
    tests = [{"description": f"test {i}", "vars": {"question": f"question number {i}", "topic": f"topic {i % 17}"},
              "assert": [{"type": "contains", "value": f"number {i}"}, ASSERTS[1], ASSERTS[2]]} for i in range(n)]
    doc = {"description": "validate benchmark", "providers": ["echo"],
           "prompts": ["Answer {{question}} about {{topic}}"], "tests": tests}
    if fmt == "json":
        path = folder / "evalrun.json"
        path.write_text(json.dumps(doc, indent=1), encoding="utf-8")
    else:
        import yaml

        path = folder / "evalrun.yaml"
        path.write_text(yaml.safe_dump(doc, sort_keys=False, width=200), encoding="utf-8")
    return path


def write_million(folder: Path, inline: bool = False) -> Path:
    """1,000 tests whose `question` lists 1,000 values: rows of a JSONL file (streamed), or inline YAML."""
    values = [f"question number {j}" for j in range(1000)]
    if not inline:
        with open(folder / "tests.jsonl", "w", encoding="utf-8") as f:
            for i in range(1000):
                f.write(json.dumps({"vars": {"question": values, "topic": f"topic {i % 17}"},
                                    "assert": ASSERTS}) + "\n")
        path = folder / "promptfooconfig.yaml"
        path.write_text(HEAD + "tests: file://tests.jsonl\n", encoding="utf-8")
        return path
    lines = [HEAD.rstrip("\n"), "tests:"]
    for i in range(1000):
        lines += [f"  - vars: {{question: {json.dumps(values)}, topic: 'topic {i % 17}'}}",
                  "    assert: " + json.dumps(ASSERTS)]
    path = folder / "promptfooconfig.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


FLATNESS = r"""
import asyncio, json, sys, tracemalloc
from pathlib import Path
from evalrun import config
from evalrun.run.options import RunOptions
from evalrun.run.runner import Runner
cfg, out = sys.argv[1], sys.argv[2]
tracemalloc.start()
suite = config.load([cfg])
_, load_peak = tracemalloc.get_traced_memory()
tracemalloc.reset_peak()
opts = RunOptions.merge(suite.evaluate_options, results_file=Path(out))
outcome = asyncio.run(Runner(suite, opts).run())
_, run_peak = tracemalloc.get_traced_memory()
print(json.dumps({"load_peak": load_peak, "run_peak": run_peak, "cases": outcome.summary["total"]}))
"""


def write_list(folder: Path, n: int, kind: str) -> Path:
    """The JSONL suite's tests as one list in a `file://tests.yaml` (block style) or `tests.json` file."""
    with open(folder / f"tests.{kind}", "w", encoding="utf-8") as f:
        f.write("" if kind == "yaml" else "[\n")
        for i in range(n):
            test = {"vars": {"question": f"question number {i}", "topic": f"topic {i % 17}"}, "assert": ASSERTS}
            if kind == "json":
                f.write(("," if i else "") + json.dumps(test) + "\n")
            else:
                f.write(f"- vars:\n    question: question number {i}\n    topic: topic {i % 17}\n  assert:\n"
                        + "".join(f"    - type: {a['type']}\n      value: '{a['value']}'\n" for a in ASSERTS))
        f.write("" if kind == "yaml" else "]\n")
    path = folder / "promptfooconfig.yaml"
    path.write_text(HEAD + f"tests: file://tests.{kind}\n", encoding="utf-8")
    return path


def flatness(env: dict[str, str], sizes: tuple[int, ...] = (5_000, 20_000, 80_000), kind: str = "jsonl") -> None:
    """tracemalloc peaks of load and run (in-process) for test files of growing size: flat means streamed."""
    import subprocess

    for n in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            cfg = write_jsonl(folder, n) if kind == "jsonl" else write_list(folder, n, kind)
            proc = subprocess.run([sys.executable, "-c", FLATNESS, str(cfg), str(folder / "r.jsonl")],
                                  capture_output=True, text=True, env=env, cwd=folder)
            if proc.returncode != 0:
                raise SystemExit(proc.stderr[-2000:])
            r = json.loads(proc.stdout.strip().splitlines()[-1])
            print(f"  {n:>7} rows: load peak {r['load_peak'] / 2**20:6.2f} MiB  run peak {r['run_peak'] / 2**20:6.2f} "
                  f"MiB (tracemalloc, Python allocations)  {r['cases']} cases", flush=True)


FLOOR = ("import json,sys\nn=0\nwith open(sys.argv[1],encoding='utf-8') as f:\n for line in f:\n"
         "  json.loads(line); n+=1\nprint(n)\n")


def row(name: str, wall: float, cpu: float, rss: float, extra: str = "") -> None:
    print(f"  {name:<10} wall {wall:7.2f} s  CPU {cpu:7.2f} s  peak RSS {rss:7.1f} MB  {extra}", flush=True)


def _tree(root: int) -> list[int]:
    """root and its descendants (Linux /proc)."""
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        try:
            for task in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{task}/children") as f:
                    todo.extend(int(c) for c in f.read().split())
        except OSError:
            pass
    return out


def _kb(pid: int, path: str, key: str) -> int:
    try:
        with open(f"/proc/{pid}/{path}") as f:
            for line in f:
                if line.startswith(key):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def tree_timed(cmd: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float, int, float, float]:
    """(wall s, CPU s of the process and its workers, exit code, peak summed RSS MB, peak summed PSS MB) of a
    command whose processes are sampled every 20 ms: with --workers the processes' memory adds up (RSS counts
    the pages a fork shares in each process; PSS splits them between the sharers)."""
    import resource
    import subprocess
    import time

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak_rss = peak_pss = 0
    while proc.poll() is None:
        pids = _tree(proc.pid)
        peak_rss = max(peak_rss, sum(_kb(p, "status", "VmRSS:") for p in pids))
        peak_pss = max(peak_pss, sum(_kb(p, "smaps_rollup", "Pss:") for p in pids))
        time.sleep(0.02)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode != 0 and proc.stderr is not None:
        print(proc.stderr.read().decode()[-2000:])
    return wall, cpu, proc.returncode, peak_rss / 1024.0, peak_pss / 1024.0


def best(cmd: list[str], env: dict[str, str], cwd: Path, runs: int) -> tuple[float, float, int, float]:
    out = [timed(cmd, env, cwd) for _ in range(runs)]
    return min(r[0] for r in out), max(r[1] for r in out), out[0][2], min(r[3] for r in out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", default=["jsonl10k", "csv10k", "jsonl100k", "json10k", "yaml10k"])
    ap.add_argument("--skip-peer", action="store_true")
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--workers", type=int, nargs="*", default=[1, 2],
                    help="jsonl100k: also run with --workers N for each N, memory summed over the processes")
    ap.add_argument("--peer", type=Path, default=next((p for p in PEERS if p.exists()), PEERS[0]))
    args = ap.parse_args()
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    env.pop("CI", None)
    for name in args.only:
        if name in ("flatness", "flatness-yaml", "flatness-json"):
            kind = name.partition("-")[2] or "jsonl"
            print(f"{name}: memory of streamed {kind.upper()} suites as the number of tests grows", flush=True)
            flatness(env, kind=kind)
            continue
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            n = 100_000 if name == "jsonl100k" else 10_000
            if name.startswith("jsonl"):
                cfg = write_jsonl(folder, n)
            elif name == "csv10k":
                cfg = write_csv(folder, n)
            elif name in ("json10k", "yaml10k"):
                cfg = write_inline(folder, n, name[:4])
            elif name in ("million", "million-yaml"):
                cfg, n = write_million(folder, inline=name == "million-yaml"), 1_000_000
            else:
                raise SystemExit(f"unknown suite {name}")
            print(f"{name}: {n} {'cases' if name.startswith('million') else 'tests'}", flush=True)
            if name in ("json10k", "yaml10k"):
                wall, rss, code, cpu = best([sys.executable, "-m", "evalrun", "validate", str(cfg)], env, folder,
                                            args.runs)
                row("evalrun", wall, cpu, rss, f"(validate, exit {code}; target <= 1 s)")
                continue
            results = folder / "results.jsonl"
            wall, rss, code, cpu = best([sys.executable, "-m", "evalrun", "eval", str(cfg), "--no-table",
                                         "--no-progress-bar", "--results-file", str(results)], env, folder,
                                        args.runs)
            with open(results, "rb") as f:
                lines = sum(1 for _ in f)
            if lines != n or code != 0:
                raise SystemExit(f"evalrun: {lines} results, exit {code}")
            row("evalrun", wall, cpu, rss)
            if name == "jsonl100k":
                fw, frss, _, fcpu = timed([sys.executable, "-c", FLOOR, str(folder / "tests.jsonl")], env, folder)
                row("floor", fw, fcpu, frss, "(json.loads of every line)")
                for workers in args.workers:  # the same run spread over processes (run/workers.py)
                    cmd = [sys.executable, "-m", "evalrun", "eval", str(cfg), "--no-table", "--no-progress-bar",
                           "--results-file", str(results), "--workers", str(workers)]
                    runs = [tree_timed(cmd, env, folder) for _ in range(args.runs)]
                    with open(results, "rb") as f:
                        lines = sum(1 for _ in f)
                    if lines != n or runs[0][2] != 0:
                        raise SystemExit(f"evalrun --workers {workers}: {lines} results, exit {runs[0][2]}")
                    print(f"  workers {workers:<2} wall {min(r[0] for r in runs):7.2f} s  CPU "
                          f"{min(r[1] for r in runs):7.2f} s  peak RSS summed {max(r[3] for r in runs):7.1f} MB"
                          f"  PSS summed {max(r[4] for r in runs):7.1f} MB  (all processes; target <= 10 s)",
                          flush=True)
            if name in ("jsonl10k", "csv10k") and not args.skip_peer and args.peer.exists():
                peer_env = {**env, **PEER_ENV, "PROMPTFOO_CONFIG_DIR": str(folder / ".promptfoo")}
                pw, prss, pcode, pcpu = best([str(args.peer), "eval", "-c", str(cfg), "--no-table",
                                              "--no-progress-bar"], peer_env, folder, args.runs)
                row("promptfoo", pw, pcpu, prss, f"(exit {pcode})")
                print(f"  ratio      wall {wall / pw:.3f} (target <= 0.1)  memory {rss / prss:.3f} (target <= 0.2)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
