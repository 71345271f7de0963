#!/usr/bin/env python3
"""How a 1,000,000-case graded suite spreads over N Ray workers, and where the limit is.

    python benchmarks/ray_simulation.py [--cases 240] [-j 8] [--rate 30] [--skip-real]

Measured here, in one run (a fake OpenAI-compatible server in this process, tests/fakeserver.py, answering every
chat completion after 200 ms; each case = 1 provider call + a `faithfulness` assertion graded by an LLM grader on
the same server = 3 calls, one after the other):
  1. the CPU each model call costs evalrun (a local run, no latency): `cpu_call`;
  2. real `evalrun eval --executor ray` runs on a local Ray instance (this machine has 2 CPUs: 1 and 2 tasks),
     without and with a provider rate limit (a token bucket of `--rate` requests/s answering 429 + Retry-After
     past it), their throughput read from the server's own clock, next to what the model below predicts;
  3. the driver's own ceiling: records/s it takes in (split.Intake: parsed, written, tallied), on synthetic records.
Then the model gives the wall time of 1,000,000 cases over N workers for typical provider rate limits:

    per task   X_task = min(j / L_case, 1 / (calls x cpu_call))           cases/s (latency-bound or CPU-bound)
    cluster    X      = min(N x X_task, R / calls, X_driver)               R = the provider's requests/s
    wall       T      = t_start + t_shard + cases / X
where t_shard is a task's time to load the suite and find its own cases (it counts every test's cases and builds
only its own: run/split.py) and X_driver the records/s the driver takes in (written as they arrive: no final
merge since the driver and --workers share split.Intake).

Figures in benchmarks/README.md ("Ray executor") come from this script.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.fakeserver import FakeOpenAI  # noqa: E402
from tests.graderfakes import step_of  # noqa: E402

LATENCY = 0.2
CALLS = 3  # provider + extract + verify
ANSWER = "The sky is blue."
REPLIES = {"extract": {"claims": [ANSWER]},
           "verify": {"verdicts": [{"verdict": "supported", "reason": "stated", "evidence": [0]}]}}


class Server:
    """The fake server with a latency, an optional token-bucket rate limit, and a log of served requests."""

    def __init__(self, latency: float, rate: float | None) -> None:
        self.latency, self.rate = latency, rate
        self.tokens = rate or 0.0
        self.last = time.monotonic()
        self.served: list[float] = []
        self.limited = 0
        self.lock = threading.Lock()
        self.fake = FakeOpenAI(self.reply)

    def _admit(self) -> bool:
        if self.rate is None:
            return True
        now = time.monotonic()
        self.tokens = min(self.rate, self.tokens + (now - self.last) * self.rate)  # burst: one second's worth
        self.last = now
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        return False

    def reply(self, body: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            if not self._admit():
                self.limited += 1
                return {"status": 429, "headers": {"Retry-After": "1"}}
            self.served.append(time.monotonic())
        step = step_of(body)
        content = json.dumps(REPLIES[step]) if step in REPLIES else ANSWER
        return {"content": content, "delay": self.latency} if self.latency else {"content": content}

    def calls_per_s(self) -> float:
        s = self.served
        return (len(s) - 1) / (s[-1] - s[0]) if len(s) > 1 else 0.0


def write_config(folder: Path, n: int, url: str) -> Path:
    lines = ["description: ray simulation (graded)", "providers:", "  - id: openai:chat:fake-model",
             f"    config: {{apiBaseUrl: '{url}', apiKey: sk-fake, temperature: 0}}",
             "grader:", "  id: openai:chat:fake-model", f"  config: {{apiBaseUrl: '{url}', apiKey: sk-fake}}",
             "prompts: ['Question {{n}}: what colour is the sky?']", "tests:"]
    lines += [f"  - vars: {{n: '{i}', context: '{ANSWER}'}}\n    assert: [{{type: faithfulness, threshold: 0.5}}]"
              for i in range(n)]
    path = folder / f"suite-{n}.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def evalrun(cfg: Path, *extra: str) -> tuple[float, float, dict[str, Any]]:
    """(wall s, CPU s of the process and its children, summary) of one `evalrun eval` subprocess."""
    out = cfg.parent / "out.json"
    env = {**os.environ, "EVALRUN_MAX_RETRIES": "30", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "evalrun", "eval", str(cfg), "--no-cache", "--no-table",
                           "--no-progress-bar", "--no-history", "-o", str(out), *extra],
                          capture_output=True, text=True, env=env, cwd=cfg.parent, timeout=900)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, 100):
        raise SystemExit(f"evalrun failed ({proc.returncode}):\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    summary = json.loads(out.read_text())["summary"]
    return wall, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime), summary


def model_rate(tasks: int, j: int, cpu_call: float, rate: float | None, l_case: float = CALLS * LATENCY,
               driver: float = float("inf"), cpus: float | None = None) -> float:
    """Cases/s the model predicts (cpus: CPUs the tasks share, when fewer than tasks)."""
    per_task = min(j / l_case, 1.0 / (CALLS * cpu_call))
    total = tasks * per_task
    if cpus is not None:
        total = min(total, cpus / (CALLS * cpu_call))
    return min(total, rate / CALLS if rate else float("inf"), driver)


def driver_ceiling(n: int = 200_000) -> float:
    """Records/s the driver's intake takes in (parsed, written, tallied) on synthetic graded records."""
    from evalrun.run.options import RunOptions
    from evalrun.run.progress import Progress
    from evalrun.run.split import Intake
    from evalrun.types import Suite

    rec = {"id": "x", "index": 0, "status": "pass", "output": ANSWER, "vars": {"n": "1", "context": ANSWER},
           "tokens": {"prompt": 20, "completion": 5, "total": 25, "cached": 0},
           "assertions": [{"type": "faithfulness", "pass": True, "score": 1.0, "grader": "openai:fake-model",
                           "tokens": {"prompt": 90, "completion": 20, "total": 110, "cached": 0},
                           "details": {"claims": [{"claim": ANSWER, "verdict": "supported"}]}}]}
    with tempfile.TemporaryDirectory() as tmp:
        batches = []
        for start in range(0, n, 500):  # tasks send ~0.5 s of results at a time; interleave as 4 tasks would
            batch = []
            for i in range(start, min(n, start + 500)):
                rec["index"], rec["id"] = i, f"c{i}"
                batch.append((json.dumps(rec) + "\n").encode())
            batches.append(batch)
        suite = Suite(description=None, prompts=(), providers=(), tests=(), files=(str(Path(tmp) / "c.yaml"),))
        c = Intake(suite, RunOptions(results_file=Path(tmp) / "r.jsonl"), Progress(None, enabled=False))
        t0 = time.perf_counter()
        for batch in reversed(batches):  # out of order, as arrivals are
            for line in batch:
                c.take(line)
        c.close("finished")
        return n / (time.perf_counter() - t0)


def shard_walk_s(cases: int = 100_000) -> float:
    """Seconds per case of the suite for a task to load it and build its shard's cases (1 of 64), on one test of
    `cases` var values (run/split.py counts the cases, then builds only the shard's)."""
    from evalrun import config
    from evalrun.run.workers import ShardJob, shard_cases

    with tempfile.TemporaryDirectory() as tmp:
        cfg = Path(tmp) / "c.yaml"
        cfg.write_text("providers: [echo]\nprompts: ['{{n}}']\ntests:\n  - vars: {n: [" +
                       ", ".join(f"'{i}'" for i in range(cases)) + "]}\n    assert: [{type: contains, value: x}]\n")
        t0 = time.perf_counter()
        suite = config.load([str(cfg)])
        job = ShardJob(configs=(), driver_cwd=tmp, shard=(1, 64))
        kept = sum(1 for _ in shard_cases(suite, job))
        assert kept == cases // 64  # part 1 of 64: positions [0, cases / 64)
        return (time.perf_counter() - t0) / cases


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", type=int, default=240, help="cases per real run")
    ap.add_argument("-j", type=int, default=8, help="concurrent cases per Ray task")
    ap.add_argument("--rate", type=float, default=30.0, help="provider rate limit of the limited run, requests/s")
    ap.add_argument("--skip-real", action="store_true", help="only the model and the driver ceiling")
    args = ap.parse_args()

    take = driver_ceiling()
    walk = shard_walk_s()
    print(f"driver: takes in {take:,.0f} records/s; a task loads and selects at {1 / walk:,.0f} suite cases/s")
    cpu_call = 0.007  # the figure; measured below unless --skip-real
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        if not args.skip_real:
            srv = Server(0.0, None)
            with srv.fake:
                cfg = write_config(folder, 300, srv.fake.url)
                evalrun(cfg, "-j", "16")  # warm-up (imports, caches of the OS)
                srv.served.clear()
                wall, cpu, summary = evalrun(cfg, "-j", "16")
            cpu_call = cpu / len(srv.served)
            print(f"local run, no latency: {len(srv.served)} calls, {cpu:.2f} CPU s -> cpu_call {cpu_call * 1000:.1f} "
                  f"ms/call (engine, litellm and the grader's parsing; {summary['passed']} passed)")
            print(f"\nreal runs: {args.cases} graded cases, {CALLS} calls each, {LATENCY * 1000:.0f} ms per call, "
                  f"-j {args.j} per task, local Ray instance (2 CPUs)")
            print("| tasks | rate limit | measured cases/s | model cases/s | 429s | wall (incl. Ray start) |")
            print("|---|---|---|---|---|---|")
            for tasks, rate in ((1, None), (2, None), (2, args.rate)):
                srv = Server(LATENCY, rate)
                with srv.fake:
                    cfg = write_config(folder, args.cases, srv.fake.url)
                    wall, _, summary = evalrun(cfg, "--executor", "ray", "--ray-tasks", str(tasks), "-j",
                                               str(args.j))
                got = srv.calls_per_s() / CALLS
                want = model_rate(tasks, args.j, cpu_call, rate, cpus=2)
                assert summary["total"] == args.cases, summary
                print(f"| {tasks} | {f'{rate:g} req/s' if rate else 'none'} | {got:.1f} | {want:.1f} | "
                      f"{srv.limited} | {wall:.1f} s ({summary['passed']} passed, {summary['errors']} errors) |")

    cases, t_start = 1_000_000, 10.0
    fixed = t_start + cases * walk
    print(f"\nmodel: {cases:,} graded cases ({CALLS:,} calls each, {LATENCY * 1000:.0f} ms per call), "
          f"-j 32 per worker, cpu_call {cpu_call * 1000:.1f} ms; fixed costs {fixed:,.0f} s (Ray start "
          f"{t_start:.0f} s, expansion walk {cases * walk:,.0f} s)")
    limits = [(None, "none"), (500 / 60, "500 RPM"), (10_000 / 60, "10k RPM"), (30_000 / 60, "30k RPM"),
              (150_000 / 60, "150k RPM")]
    workers = (1, 4, 16, 64, 256)
    print("| rate limit | " + " | ".join(f"{n} workers" for n in workers) + " | workers that saturate it |")
    print("|---|" + "---|" * (len(workers) + 1))
    per_task = model_rate(1, 32, cpu_call, None)
    for rate, name in limits:
        cells = []
        for n in workers:
            hours = (fixed + cases / model_rate(n, 32, cpu_call, rate, driver=take)) / 3600
            cells.append(f"{hours:,.1f} h" if hours >= 1 else f"{hours * 60:,.0f} min")
        need = f"{rate / CALLS / per_task:,.1f}" if rate else f"- (the driver's intake: {take / per_task:,.0f})"
        print(f"| {name} | " + " | ".join(cells) + f" | {need} |")


if __name__ == "__main__":
    main()
