"""Where the parts of a run (run/split.py) run, each with the ordinary Runner into a file its driver takes in:
forked processes (`--workers N`), or Ray streaming tasks that load the config themselves (`--executor ray`)."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import logging
import os
import shutil
import signal
import sys
import tempfile
import time
import traceback
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from evalrun.errors import EvalrunError, UsageError
from evalrun.pyexpr import watch_sigint
from evalrun.run import split
from evalrun.run.options import RunOptions
from evalrun.run.progress import Progress
from evalrun.run.runner import Runner
from evalrun.run.split import Window
from evalrun.run.store import new_lines
from evalrun.run.tally import RunOutcome
from evalrun.types import Case, Suite

MAX_WORKERS = 256
RETRIES = 3  # attempts after the first for a Ray shard whose task failed
MAX_TASKS = 10_000


def parse(text: str) -> int:
    """`--workers N` or `--workers auto` (the CPUs this process may use)."""
    if text.strip().lower() == "auto":  # macOS and Windows have no affinity mask
        affinity = getattr(os, "sched_getaffinity", None)
        return max(1, len(affinity(0)) if affinity else os.cpu_count() or 1)
    n = int(text) if text.strip().isascii() and text.strip().isdigit() else 0  # not "²"
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
            described: list[str] = []  # the workers' graders as a run in one process names them
            for k, w in enumerate(wins):
                if k in failed:
                    intake.fail(f"worker {k + 1}/{len(wins)}", "worker process", failed[k],
                                split.window_cases(suite, opts.repeat, w))
                elif (work / f"{k}.graders").exists():
                    graders = json.loads((work / f"{k}.graders").read_text(encoding="utf-8"))
                    described += [g for g in graders if g not in described]
            intake.tally.graders = described
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
        """Wait for every worker, taking its records in; (worker -> why it failed, interrupted?)."""
        failed: dict[int, str] = {}
        interrupted = False
        live = dict(pids)
        read = dict.fromkeys(pids.values(), 0)  # worker -> bytes of its file taken

        def collect(k: int) -> None:
            for line in new_lines(work / str(k) / "part.jsonl", read[k]):
                read[k] += len(line)  # first: a record is taken once, even when Ctrl-C interrupts this loop
                intake.take(line)

        while live:
            try:
                for pid in list(live):
                    done, status = os.waitpid(pid, os.WNOHANG)
                    if done:
                        k = live.pop(pid)
                        if status != 0:
                            failed[k] = _worker_failure(status, k, work)
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


def _worker_failure(status: int, k: int, work: Path) -> str:
    """Why worker k failed: its exit, and the last line of its traceback when it left one."""
    code = os.waitstatus_to_exitcode(status)
    why = f"exit status {code}" if code >= 0 else f"killed by {-code}"
    with contextlib.suppress(ValueError):
        why = f"killed by {signal.Signals(-code).name}" if code < 0 else why
    error = work / f"{k}.error"
    lines = error.read_text(encoding="utf-8", errors="replace").strip().splitlines() if error.exists() else []
    return f"{why}: {lines[-1]}" if lines else why


# ------------------------------------------------------------------ Ray tasks (--executor ray)
@dataclass(frozen=True)
class ShardJob:
    configs: tuple[str, ...]  # absolute paths on the driver
    driver_cwd: str
    shard: tuple[int, int]  # (k, n)
    cli_vars: dict[str, Any] | None = None
    strict: bool | None = None
    options: RunOptions = field(default_factory=RunOptions)  # the driver's
    failing: frozenset[str] | None = None  # --filter-failing's ids, read on the driver
    batch_s: float = 0.5


def resolve(path: str, driver_cwd: str) -> str:
    """The driver's path if the worker sees it, else the same path under the worker's working directory."""
    if os.path.exists(path):
        return path
    rel = os.path.relpath(path, driver_cwd)
    if not rel.startswith(os.pardir) and os.path.exists(rel):
        return os.path.abspath(rel)
    return path  # loading it raises the ConfigError that names it


def shard_cases(suite: Suite, job: ShardJob, skip: bytes = b"") -> Iterator[Case]:
    """The shard's cases (as `eval --shard K/N` runs them), less those `skip` marks (`Intake.delivered`)."""
    opts = job.options
    stream, _ = split.cases(suite, opts.repeat, part=job.shard, first_n=opts.filter_first_n,
                            select=split.selector(opts.filter_pattern, job.failing))
    return (c for c in stream if c.index >= len(skip) or not skip[c.index]) if skip else stream


def run_shard(job: ShardJob, skip: bytes = b"") -> Iterator[list[bytes]]:
    """Run the shard; yield its records in batches as they are written (a Ray streaming-generator task). Tasks
    run with max_retries=0: Ray re-runs a streaming task from its start and drops as many items as it delivered,
    which loses cases when the batches differ; the driver retries a shard itself, skipping what it holds."""
    from evalrun import config

    with tempfile.TemporaryDirectory(prefix="evalrun-ray-") as scratch:
        suite = config.load([resolve(p, job.driver_cwd) for p in job.configs], cli_vars=job.cli_vars,
                            strict=job.strict)
        runner = Runner.for_part(suite, job.options, Path(scratch), lambda s, _repeat: shard_cases(s, job, skip))
        results = runner.options.results_file
        assert results is not None
        pos = 0
        batch: list[bytes] = []
        loop = asyncio.new_event_loop()
        task = loop.create_task(runner.run())
        try:
            while not task.done() or batch:  # a last read after the run ended
                loop.run_until_complete(asyncio.wait({task}, timeout=job.batch_s))
                batch = new_lines(results, pos)
                pos += sum(map(len, batch))
                if batch:
                    yield batch
            task.result()  # a config error or a bug in the task: raised to the driver
        finally:
            if not task.done():  # the driver cancelled us (generator closed)
                task.cancel()
                with contextlib.suppress(BaseException):
                    loop.run_until_complete(task)
            loop.close()


def import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise UsageError("--executor ray needs Ray, which is not installed", key="--executor",
                         hint="pip install 'evalrun-llm[ray]' (or run without --executor ray)") from None
    return ray


def check_args(executor: str | None, address: str | None, tasks: int | None, *,
               shard: str | None) -> dict[str, Any]:
    """The Ray options checked (usage errors), Ray imported; RayExecutor's keyword arguments."""
    if executor != "ray":
        raise UsageError("--ray-address and --ray-tasks need --executor ray", key="--executor",
                         hint="add --executor ray (pip install 'evalrun-llm[ray]')")
    if shard is not None:
        raise UsageError("--shard and --executor ray do not combine: the Ray executor makes the shards itself",
                         key="--shard", hint="set their number with --ray-tasks N")
    if tasks is not None and not 1 <= tasks <= MAX_TASKS:
        raise UsageError(f"--ray-tasks {tasks} is out of range: must be between 1 and {MAX_TASKS:,}",
                         key="--ray-tasks")
    import_ray()
    return {"address": address, "tasks": tasks}


def job_for(paths: list[str], opts: RunOptions, *, cli_vars: dict[str, Any] | None,
            strict: bool | None) -> ShardJob:
    """What every task gets (its shard set later): the driver's config paths and the run options."""
    failing = frozenset(split.failing_ids(opts.filter_failing, opts.failing_kind)) if opts.filter_failing else None  # read here
    return ShardJob(configs=tuple(os.path.abspath(p) for p in paths), driver_cwd=os.getcwd(), shard=(1, 1),
                    cli_vars=cli_vars, strict=strict, options=opts, failing=failing)


def _task_failure(ray: Any, e: BaseException) -> tuple[str, bool]:
    """(message, worth retrying) for a failed task."""
    cause = getattr(e, "cause", None) if isinstance(e, ray.exceptions.RayTaskError) else None
    if isinstance(cause, EvalrunError):
        return f"{type(cause).__name__}: {cause}", False  # the same on every attempt
    text = str(cause if cause is not None else e).strip().splitlines()
    return f"{type(cause or e).__name__}: {text[0] if text else ''}", True


class RayExecutor:
    def __init__(self, suite: Suite, options: RunOptions, job: ShardJob, *, address: str | None = None,
                 tasks: int | None = None, progress: Progress | None = None) -> None:
        """`address` None: RAY_ADDRESS, else a local instance; `tasks` None: the cluster's CPUs."""
        self.suite = suite
        self.options = options
        self.job = job
        self.address, self.tasks = address, tasks
        self.progress = progress or Progress(None, enabled=options.progress)

    def _connect(self, ray: Any) -> bool:
        """Initialise Ray unless this process already did; True when we started it (and so stop it)."""
        if ray.is_initialized():
            return False
        kwargs: dict[str, Any] = {"logging_level": logging.WARNING, "log_to_driver": False}
        address = self.address or os.environ.get("RAY_ADDRESS") or None
        if address is None:
            kwargs["include_dashboard"] = False
        try:
            ray.init(address=address, **kwargs)
        except (ConnectionError, RuntimeError, ValueError) as e:
            raise UsageError(f"cannot connect to the Ray cluster at {address!r}: {e}", key="--ray-address",
                             hint="start one with `ray start --head` and pass its address; a cluster with "
                                  "token authentication (Ray's default) also needs RAY_AUTH_MODE=token here "
                                  "(or leave out --ray-address and RAY_ADDRESS for a local instance)") from None
        return True

    def _shards(self, ray: Any, total: int | None) -> int:
        n = self.tasks or max(1, int(ray.cluster_resources().get("CPU", 1)))
        if total is not None:
            n = max(1, min(n, total))
        why = split.serial_reason(self.suite) if n > 1 else None
        if why is not None:
            print(f"evalrun: warning: {why}: one Ray task runs them all, in order", file=sys.stderr)
            n = 1
        return n

    async def run(self) -> RunOutcome:
        ray = import_ray()
        opts = self.options
        started = time.time()
        total = None if opts.filter_pattern or opts.filter_failing else \
            split.cases(self.suite, opts.repeat, first_n=opts.filter_first_n)[1]
        started_ray = self._connect(ray)
        status = "failed"
        try:
            n = self._shards(ray, total)
            self.progress.total = total
            intake = split.Intake(self.suite, opts, self.progress)
            intake.tally.started = started  # Ray's start counts
            try:
                task = ray.remote(num_returns="streaming", max_retries=0, num_cpus=1)(run_shard)
                live: dict[int, Any] = {}
                shards = [asyncio.ensure_future(self._shard(ray, task, k, n, intake, live)) for k in range(1, n + 1)]
                try:
                    with watch_sigint():
                        await asyncio.gather(*shards)
                    status = "finished"
                except asyncio.CancelledError:
                    status = "interrupted"
                    for gen in list(live.values()):
                        with contextlib.suppress(Exception):
                            ray.cancel(gen, force=True)
                    for s in shards:
                        s.cancel()
                    await asyncio.gather(*shards, return_exceptions=True)
            finally:
                intake.close(status)
        finally:
            if started_ray:
                ray.shutdown()
        return intake.outcome(status)

    async def _shard(self, ray: Any, task: Any, k: int, n: int, intake: split.Intake, live: dict[int, Any]) -> None:
        job = replace(self.job, shard=(k, n))
        for attempt in range(1, RETRIES + 2):
            gen = task.remote(job, intake.delivered())
            live[k] = gen
            try:
                async for ref in gen:
                    for line in await ref:
                        intake.take(line)
                return
            except ray.exceptions.RayError as e:
                why, again = _task_failure(ray, e)
                if not again or attempt > RETRIES:
                    intake.fail(f"Ray task for shard {k}/{n}", "Ray task",
                                why if not again else f"{why} (after {attempt} attempts)", shard_cases(self.suite, job))
                    return
                self.progress.note(f"shard {k}/{n} task failed ({why}); retrying")
            finally:
                live.pop(k, None)
