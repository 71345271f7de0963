"""`evalrun eval --workers N`: one run's cases spread over N forked processes on this machine, merged into one run.

Each worker is a fork made after the config was loaded and checked; it runs its window (run/split.py, the parts of
`--shard K/N`) with the ordinary Runner into a spool file and hands back its tally; the driver appends the spools
in window order and adds the tallies, so the outputs are a one-process run's. What it does for the user (failures,
Ctrl-C, runs that stay in one process): docs/scaling.md, "--workers".
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import mmap
import os
import pickle
import shutil
import signal
import struct
import sys
import tempfile
import time
import traceback
from dataclasses import replace
from pathlib import Path

from evalrun.errors import UsageError
from evalrun.run import recording, split
from evalrun.run.options import RunOptions
from evalrun.run.progress import Progress
from evalrun.run.runner import Runner
from evalrun.run.split import Window
from evalrun.run.store import ResultsWriter, open_results, read_records
from evalrun.run.tally import RunOutcome, Tally
from evalrun.types import Suite

MAX_WORKERS = 256
_SLOT = struct.Struct("qqq")  # a worker's progress counters in shared memory: passed, failed, errors


def parse(text: str) -> int:
    """`--workers N` or `--workers auto` (the CPUs this process may use)."""
    if text.strip().lower() == "auto":
        return cpu_count()
    try:
        n = int(text)
    except ValueError:
        n = 0
    if not 1 <= n <= MAX_WORKERS:
        raise UsageError(f"--workers {text!r} is not a number of processes between 1 and {MAX_WORKERS}",
                         key="--workers", hint="e.g. --workers 4, or --workers auto for one per CPU")
    return n


def cpu_count() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - macOS and Windows have no affinity mask
        return max(1, os.cpu_count() or 1)


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


class _SharedProgress(Progress):
    """A worker's progress: its counts in the shared memory the driver reads (nothing drawn here)."""

    def __init__(self, buf: mmap.mmap, slot: int) -> None:
        super().__init__(None, enabled=False)
        self.buf, self.at = buf, slot * _SLOT.size

    def update(self, status: str) -> None:
        super().update(status)
        _SLOT.pack_into(self.buf, self.at, self.passed, self.failed, self.errors)


class WorkerPool:
    """Runs a suite's cases in N forked processes and merges them into one run (see the module doc)."""

    def __init__(self, suite: Suite, options: RunOptions, workers: int, progress: Progress | None = None) -> None:
        self.suite = suite
        self.options = options
        self.workers = workers
        self.progress = progress or Progress(None, enabled=options.progress)
        self.failed: dict[int, str] = {}  # worker -> why it failed

    def run_sync(self) -> RunOutcome:
        """The whole run (workers forked here: call it outside any event loop)."""
        suite, opts = self.suite, self.options
        started = time.time()
        asyncio.run(Runner(suite, opts).check())  # a bad provider or grader id: one error before any worker starts
        wins = [w for w in split.windows(suite, opts.repeat, self.workers, opts.filter_first_n) if w]
        files = recording.plan(suite, opts)
        writer = open_results(files.results_file)
        recording.begin(files, suite, opts)
        work = Path(tempfile.mkdtemp(prefix=".evalrun-workers-", dir=files.results_file.parent))
        tally = Tally(started=started)
        status = "failed"
        try:
            self.progress.total = wins[-1].stop if wins else 0
            shared = mmap.mmap(-1, _SLOT.size * max(1, len(wins)))
            gc.freeze()  # the objects made so far stay out of collections: a worker's GC never copies their pages
            pids: dict[int, int] = {}
            for k, w in enumerate(wins):
                try:
                    pids[self._fork(w, k, work, shared)] = k
                except OSError as e:  # a process limit: stop the workers started, the run never began
                    for pid in pids:
                        os.kill(pid, signal.SIGKILL)
                        os.waitpid(pid, 0)
                    raise UsageError(f"cannot start worker process {k + 1} of {len(wins)}: {e.strerror or e}",
                                     key="--workers", hint="run with fewer --workers") from None
            interrupted = self._wait(pids, shared)
            for k, w in enumerate(wins):
                self._gather(k, w, work, writer, tally)
            tally.interrupted = tally.interrupted or interrupted
            status = "interrupted" if tally.interrupted else "finished"
        finally:
            writer.close()
            self.progress.close()
            shutil.rmtree(work, ignore_errors=True)
            gc.unfreeze()
            if status == "failed":
                recording.end(files, status=status, summary=tally.summary(), graders=[])
        for k, why in sorted(self.failed.items()):
            print(f"evalrun: warning: worker {k + 1}/{len(wins)} failed: {why}; the cases it did not finish are "
                  "errors", file=sys.stderr)
        return recording.finish(files, suite, opts, tally, status)

    def _fork(self, w: Window, k: int, work: Path, shared: mmap.mmap) -> int:
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid:
            return pid
        code = 70
        try:
            with contextlib.suppress(OSError):
                os.setpgid(0, 0)  # Ctrl-C reaches the driver only; it passes one SIGINT on
            code = self._child(w, k, work, shared)
        except BaseException:
            with open(work / f"{k}.error", "w", encoding="utf-8") as f:
                f.write(traceback.format_exc())
        finally:
            sys.stderr.flush()
            os._exit(code)

    def _child(self, w: Window, k: int, work: Path, shared: mmap.mmap) -> int:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        scratch = work / str(k)
        scratch.mkdir()
        # the scratch folder stands in for the config's: the worker's last-run pointer lands there
        suite = replace(split.window_suite(self.suite, w), files=(str(scratch / "worker.yaml"),))
        opts = replace(self.options, results_file=work / f"{k}.jsonl", history=False, progress=False,
                       resume=False, shard=None, filter_first_n=None,
                       max_concurrency=max(1, -(-self.options.max_concurrency // self.workers)))
        runner = Runner(suite, opts, progress=_SharedProgress(shared, k),
                        cases=lambda _suite, repeat: split.window_cases(self.suite, repeat, w))
        outcome = asyncio.run(runner.run())
        tally = outcome.tally
        tally.derived = ()  # compiled expressions: the driver compiles its own
        with open(work / f"{k}.tally", "wb") as f:
            pickle.dump(tally, f, protocol=pickle.HIGHEST_PROTOCOL)
        return 0

    def _wait(self, pids: dict[int, int], shared: mmap.mmap) -> bool:
        """Wait for every worker, drawing their progress; True when the run was interrupted."""
        interrupted = False
        live = dict(pids)
        while live:
            try:
                for pid in list(live):
                    done, status = os.waitpid(pid, os.WNOHANG)
                    if done:
                        k = live.pop(pid)
                        if status != 0:
                            self.failed[k] = _exit_reason(status)
                if live:
                    self._show(shared, len(pids))
                    time.sleep(0.05)
            except KeyboardInterrupt:  # Ctrl-C or SIGTERM: each worker stops as an interrupted run does
                if not interrupted:
                    interrupted = True
                    for pid in live:
                        os.kill(pid, signal.SIGINT)
        self._show(shared, len(pids))
        return interrupted

    def _show(self, shared: mmap.mmap, n: int) -> None:
        p = self.progress
        if not p.enabled:
            return
        p.passed = p.failed = p.errors = 0
        for k in range(n):
            passed, failed, errors = _SLOT.unpack_from(shared, k * _SLOT.size)
            p.passed, p.failed, p.errors = p.passed + passed, p.failed + failed, p.errors + errors
        p.done = p.passed + p.failed + p.errors
        p.draw()

    def _gather(self, k: int, w: Window, work: Path, writer: ResultsWriter, tally: Tally) -> None:
        """Worker k's records appended to the results file and its tally added (or, for a worker that died,
        its records re-read and an ERROR for each case it did not deliver)."""
        spool, saved = work / f"{k}.jsonl", work / f"{k}.tally"
        if k not in self.failed and saved.exists():
            with open(saved, "rb") as f:
                part: Tally = pickle.load(f)  # noqa: S301 - written by our own worker a moment ago
            tally.absorb(part, writer.append_file(spool))
            return
        why = self.failed.get(k) or "it ended without its results"
        error = work / f"{k}.error"
        if error.exists():
            lines = error.read_text(encoding="utf-8", errors="replace").strip().splitlines()
            why = f"{why}: {lines[-1]}" if lines else why
            self.failed[k] = why
        delivered: set[int] = set()
        if spool.exists():
            base = writer.append_file(spool)
            for offset, rec in read_records(spool):
                delivered.add(int(rec.get("index", 0)))
                tally.add(rec, base + offset)
        from evalrun.run.serialize import error_records

        missing = (c for c in split.window_cases(self.suite, self.options.repeat, w) if c.index not in delivered)
        for rec in error_records(self.suite, missing, f"the worker process running this case failed: {why}"):
            tally.add(rec, writer.write(rec))


def _exit_reason(status: int) -> str:
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = str(sig)
        return f"killed by {name}"
    return f"exit status {os.WEXITSTATUS(status)}"
