"""`evalrun eval --workers N`: one run's windows (run/split.py) in N processes forked after the config was loaded
and checked, each running the ordinary Runner into a file of its own that the driver's `split.Intake` takes in."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import os
import shutil
import signal
import sys
import tempfile
import time
import traceback
from pathlib import Path

from evalrun.errors import UsageError
from evalrun.run import split
from evalrun.run.options import RunOptions
from evalrun.run.progress import Progress
from evalrun.run.runner import Runner
from evalrun.run.split import Window
from evalrun.run.store import new_lines
from evalrun.run.tally import RunOutcome
from evalrun.types import Suite

MAX_WORKERS = 256


def parse(text: str) -> int:
    """`--workers N` or `--workers auto` (the CPUs this process may use)."""
    if text.strip().lower() == "auto":  # macOS and Windows have no affinity mask
        affinity = getattr(os, "sched_getaffinity", None)
        return max(1, len(affinity(0)) if affinity else os.cpu_count() or 1)
    n = int(text) if text.strip().isdigit() else 0
    if not 1 <= n <= MAX_WORKERS:
        raise UsageError(f"--workers {text!r} is not a number of processes between 1 and {MAX_WORKERS}",
                         key="--workers", hint="e.g. --workers 4, or --workers auto for one per CPU")
    return n


def single_reason(suite: Suite, opts: RunOptions) -> str | None:
    """Why the run cannot be split over processes, or None."""
    if not hasattr(os, "fork"):
        return "this platform cannot fork processes"
    if opts.resume:
        return "--resume continues a run in one process"
    if opts.shard is not None:
        return "--shard selects over the whole expansion"
    if opts.filter_pattern or opts.filter_failing:
        return "--filter-pattern and --filter-failing select over the whole expansion"
    return split.serial_reason(suite)


class WorkerPool:
    """Runs a suite's cases in N forked processes and merges them into one run (see the module doc)."""

    def __init__(self, suite: Suite, options: RunOptions, workers: int, progress: Progress | None = None) -> None:
        self.suite = suite
        self.options = options
        self.workers = workers
        self.progress = progress or Progress(None, enabled=options.progress)

    def run_sync(self) -> RunOutcome:
        """The whole run (workers forked here: call it outside any event loop)."""
        suite, opts = self.suite, self.options
        asyncio.run(Runner(suite, opts).check())  # a bad provider or grader id: one error before any worker starts
        wins = [w for w in split.windows(suite, opts.repeat, self.workers, opts.filter_first_n) if w]
        intake = split.Intake(suite, opts, self.progress)
        work = Path(tempfile.mkdtemp(prefix=".evalrun-workers-", dir=intake.files.results_file.parent))
        status = "failed"
        try:
            self.progress.total = wins[-1].stop if wins else 0
            gc.freeze()  # the objects made so far stay out of collections: a worker's GC never copies their pages
            pids: dict[int, int] = {}
            for k, w in enumerate(wins):
                try:
                    pids[self._fork(w, k, work)] = k
                except OSError as e:  # a process limit: stop the workers started, the run never began
                    for pid in pids:
                        os.kill(pid, signal.SIGKILL)
                        os.waitpid(pid, 0)
                    raise UsageError(f"cannot start worker process {k + 1} of {len(wins)}: {e.strerror or e}",
                                     key="--workers", hint="run with fewer --workers") from None
            failed, interrupted = self._wait(pids, work, intake)
            for k, w in enumerate(wins):
                if k in failed:
                    intake.fail(f"worker {k + 1}/{len(wins)}", "worker process", _why(failed[k], k, work),
                                split.window_cases(suite, opts.repeat, w))
                elif (work / f"{k}.graders").exists():
                    graders = json.loads((work / f"{k}.graders").read_text(encoding="utf-8"))
                    intake.tally.graders.extend(g for g in graders if g not in intake.tally.graders)
            status = "interrupted" if interrupted else "finished"
        finally:
            intake.close(status)
            shutil.rmtree(work, ignore_errors=True)
            gc.unfreeze()
        return intake.outcome(status)

    def _fork(self, w: Window, k: int, work: Path) -> int:
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid:
            return pid
        code = 70
        try:
            with contextlib.suppress(OSError):
                os.setpgid(0, 0)  # Ctrl-C reaches the driver only; it passes one SIGINT on
            signal.signal(signal.SIGINT, signal.default_int_handler)
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            scratch = work / str(k)
            scratch.mkdir()
            runner = Runner.for_part(split.window_suite(self.suite, w), self.options, scratch,
                                     lambda _suite, repeat: split.window_cases(self.suite, repeat, w),
                                     max_concurrency=max(1, -(-self.options.max_concurrency // self.workers)))
            outcome = asyncio.run(runner.run())
            (work / f"{k}.graders").write_text(json.dumps(outcome.tally.graders), encoding="utf-8")
            code = 0
        except BaseException:
            with open(work / f"{k}.error", "w", encoding="utf-8") as f:
                f.write(traceback.format_exc())
        finally:
            sys.stderr.flush()
            os._exit(code)

    def _wait(self, pids: dict[int, int], work: Path, intake: split.Intake) -> tuple[dict[int, str], bool]:
        """Wait for every worker, taking its records in as they are written; (worker -> why it failed, whether the
        run was interrupted)."""
        failed: dict[int, str] = {}
        interrupted = False
        live = dict(pids)
        read = dict.fromkeys(pids.values(), 0)  # worker -> bytes of its file taken

        def collect(k: int) -> None:
            for rec, line in new_lines(work / str(k) / "part.jsonl", read[k]):
                read[k] += len(line)  # first: a record is taken once, even when Ctrl-C interrupts this loop
                intake.take(rec, line)

        while live:
            try:
                for pid in list(live):
                    done, status = os.waitpid(pid, os.WNOHANG)
                    if done:
                        k = live.pop(pid)
                        if status != 0:
                            failed[k] = _exit_reason(status)
                    collect(pids[pid])
                if live:
                    time.sleep(0.05)
            except KeyboardInterrupt:  # Ctrl-C or SIGTERM: each worker stops as an interrupted run does
                if not interrupted:
                    interrupted = True
                    for pid in live:
                        os.kill(pid, signal.SIGINT)
        for k in read:  # every line written before each worker ended
            collect(k)
        return failed, interrupted


def _why(exit_reason: str, k: int, work: Path) -> str:
    """Why worker k failed: its exit, and the last line of its traceback when it left one."""
    error = work / f"{k}.error"
    lines = error.read_text(encoding="utf-8", errors="replace").strip().splitlines() if error.exists() else []
    return f"{exit_reason}: {lines[-1]}" if lines else exit_reason


def _exit_reason(status: int) -> str:
    code = os.waitstatus_to_exitcode(status)
    if code >= 0:
        return f"exit status {code}"
    with contextlib.suppress(ValueError):
        return f"killed by {signal.Signals(-code).name}"
    return f"killed by {-code}"
