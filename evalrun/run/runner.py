"""Scheduling: `max_concurrency` workers pull from one lazy stream of cases, each result written and tallied as it
ends; Ctrl-C keeps every finished result, `resume` skips the case ids already written."""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from evalrun.assertions import model_graded
from evalrun.assertions.engine import compile_derived
from evalrun.credentials import Scrubber
from evalrun.errors import ConfigError
from evalrun.providers.ids import missing_key_message
from evalrun.pyexpr import watch_sigint
from evalrun.run import recording, split
from evalrun.run.casework import CaseEnv, error_result, run_case
from evalrun.run.options import RunOptions
from evalrun.run.progress import Progress
from evalrun.run.store import RESUME_HINT, Records, ResultsWriter, read_records
from evalrun.run.tally import RunOutcome, Tally
from evalrun.types import Case, CaseResult, ProviderSpec, Suite, every_assertion


def release_free_memory() -> bool:
    """Hand the pages freed by loading the suite back to the OS (glibc's malloc_trim; False without it): a
    1,000,000-case suite was 77 MB resident after loading, 56 MB after trimming."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        trim = ctypes.CDLL("libc.so.6").malloc_trim  # glibc's soname (find_library would run ldconfig)
    except (OSError, AttributeError):  # musl and other libcs: no libc.so.6 or no malloc_trim
        return False
    trim(0)
    return True


def _previous(path: Path, *, retry_errors: bool = False) -> dict[str, tuple[int, dict[str, Any]]]:
    """Results already in the file (for --resume): id -> (offset, what Tally.add reads: a resumed run stays small);
    `retry_errors`: without its ERROR cases (run again, their new results appended: the last one counts)."""
    previous: dict[str, tuple[int, dict[str, Any]]] = {}
    for off, rec in read_records(path, key="--resume", hint=RESUME_HINT):
        if retry_errors and rec.get("status") == "error":
            previous.pop(rec["id"], None)
            continue
        slim = {k: rec.get(k) for k in ("id", "index", "status", "cached", "tokens", "cost")}
        slim["assertions"] = [{"tokens": a.get("tokens"), "cost": a.get("cost")} for a in rec.get("assertions") or []]
        previous[rec["id"]] = (off, slim)
    return previous


class _LazyTransport:
    """The run's LLMTransport, made (its module imported, ~0.1 s) only when a model call needs it."""

    def __init__(self, options: RunOptions, progress: Progress) -> None:
        self.options, self.progress = options, progress
        self.created: Any = None

    def __getattr__(self, name: str) -> Any:
        if self.created is None:
            from evalrun.providers.litellm_ import LLMTransport

            self.created = LLMTransport(max_concurrency=self.options.max_concurrency,
                                        use_cache=self.options.use_cache, on_event=self.progress.note)
        return getattr(self.created, name)


class Runner:
    """Runs a suite; `build_provider` and `cases` replace the real ones (tests, workers, Ray tasks)."""

    def __init__(self, suite: Suite, options: RunOptions, *, build_provider: Callable[..., Any] | None = None,
                 cases: Callable[[Suite, int], Iterator[Case]] | None = None,
                 progress: Progress | None = None) -> None:
        self.suite = suite
        self.options = options
        self.progress = progress or Progress(None, enabled=options.progress)
        self.transport = _LazyTransport(options, self.progress)
        self.resolver: Any = None
        #: What records and messages redact: `providers:`' credentials, and each grader's and test provider's once built
        self.scrub = Scrubber.for_run(suite.providers)
        self.build_provider = build_provider
        self.cases = cases

    @classmethod
    def for_part(cls, suite: Suite, options: RunOptions, scratch: Path, cases: Callable[[Suite, int], Iterator[Case]],
                 **changes: Any) -> Runner:
        """The Runner of one part of a split run: the caller's `cases` into scratch/part.jsonl."""
        suite = replace(suite, files=(str(scratch / "part.yaml"),))
        opts = replace(options, results_file=scratch / "part.jsonl", history=False, progress=False, resume=False,
                       shard=None, filter_pattern=None, filter_first_n=None, filter_failing=None, **changes)
        return cls(suite, opts, cases=cases)

    async def check(self) -> None:
        """Providers built and grader ids resolved, as before a first case (for `--workers`' driver)."""
        await self._close(self._env())

    def _env(self) -> CaseEnv:
        if self.resolver is None:
            from evalrun.grading.select import GraderResolver

            self.resolver = GraderResolver(self.suite, self.options.grader, self.transport,
                                           on_provider=self.scrub.add_provider)
            if getattr(self.suite.tests, "graded", True):  # a streamed TestList knows it has no graded test
                self.resolver.check(self.suite.tests, keys=True)  # a bad grader id is a config error before any call
        from evalrun import providers as providers_pkg

        make = self.build_provider or providers_pkg.build

        def build(spec: ProviderSpec) -> Any:
            self.scrub.add_provider(spec)  # a test's own provider: its credentials too
            provider = make(spec, self.suite.base_dir, self.transport)
            missing = provider.missing_key() if hasattr(provider, "missing_key") else []
            if missing:  # found now, not after every case's retries
                message, hint = missing_key_message(f"provider {spec.id}", missing)
                raise ConfigError.at(spec.loc, message, key="providers", hint=hint)
            return provider

        env = CaseEnv({id(spec): build(spec) for spec in self.suite.providers}, build, self.resolver.resolve,
                      self.resolver.embedder, self.options.use_cache, self.options.delay_ms / 1000.0,
                      self.suite.base_dir, self.suite.undefined_renders_empty)
        if isinstance(self.suite.tests, tuple):  # tests' own providers: a bad one is a config error now
            for test in self.suite.tests:
                if test.provider is not None:
                    env.test_provider(test.provider)
                for spec in every_assertion(test.asserts):  # a hosted service's key (moderation, pi), as a grader's
                    missing = spec.handler.missing_key(test.options) if spec.handler is not None else None
                    if missing:
                        raise ConfigError.at(spec.loc, missing, key=spec.key_path or None,
                                             hint="set it before running: the assertion calls a hosted service")
        return env

    async def run(self) -> RunOutcome:
        opts = self.options
        tally = Tally(derived=tuple(compile_derived(self.suite.derived_metrics)))
        release_free_memory()  # what loading the suite freed, before the run allocates its own
        env = self._env()  # builds providers: a bad provider is a ConfigError before anything runs
        select = split.selector(opts.filter_pattern, opts.filter_failing, opts.failing_kind)
        if self.cases:  # a worker's window, a Ray task's part: chosen by the caller, filtered here
            cases, total = split.apply(self.cases(self.suite, opts.repeat), select, opts.filter_first_n), None
        else:  # the run's (its --shard part), and how many when that is known up front
            cases, total = split.cases(self.suite, opts.repeat, part=opts.shard, first_n=opts.filter_first_n,
                                       select=select)
        stream = model_graded.batches(cases)
        files = recording.plan(self.suite, opts)
        writer = ResultsWriter(files.results_file, append=opts.resume)
        previous = _previous(files.results_file, retry_errors=opts.retry_errors) if opts.resume else {}
        recording.begin(files, self.suite, opts)
        status = "failed"
        self.progress.total = total
        timeout = opts.timeout_s

        records = Records(self.suite, self.scrub)

        def finish(result: CaseResult, case: Case) -> None:
            rec, data = records.encoded(result, case.prompt)
            offset = writer.write(data + b"\n")
            tally.add(rec, offset)
            self.progress.update(result.status)

        async def one(case: Case) -> CaseResult:
            if timeout is None:
                return await run_case(case, env)
            try:
                return await asyncio.wait_for(run_case(case, env), timeout)
            except asyncio.TimeoutError:
                return error_result(case, f"timed out after {timeout:g}s (--timeout, evaluateOptions.timeoutMs)")

        def resumed(case: Case) -> bool:
            prev = previous.pop(case.id, None)
            if prev is not None:
                tally.add(prev[1], prev[0], resumed=True)
                self.progress.update(str(prev[1].get("status")))
            return prev is not None

        async def group(cases: list[Case]) -> None:
            """Cases compared with each other (select-best): run together, each seeing their OutputGroup."""
            todo = [c for c in cases if not resumed(c)]
            shared = model_graded.OutputGroup(c.id for c in todo)

            async def member(case: Case) -> CaseResult:
                model_graded.CURRENT.set(shared)
                try:
                    return await one(case)
                finally:
                    shared.case_done(case.id)

            results = await asyncio.gather(*(member(c) for c in todo))
            for case, result in zip(todo, results, strict=True):
                finish(result, case)

        async def worker() -> None:
            for n, item in enumerate(stream, 1):  # shared lazy iterator: each worker pulls the next case or group
                if n % 64 == 0:  # cases that never wait (echo) still let Ctrl-C and other workers in
                    await asyncio.sleep(0)
                if isinstance(item, list):
                    await group(item)
                elif not (previous and resumed(item)):
                    finish(await (run_case(item, env) if timeout is None else one(item)), item)

        # later cases read earlier outputs: one case at a time, in order (promptfoo)
        n_workers = 1 if split.serial_reason(self.suite) else opts.max_concurrency
        workers = [asyncio.ensure_future(worker()) for _ in range(n_workers)]
        try:
            with watch_sigint():  # tells a real Ctrl-C from user code's `raise KeyboardInterrupt`
                await asyncio.gather(*workers)
            status = "finished"
        except BaseException as e:  # Ctrl-C, or a bug or a config error from the case stream: stop the others
            for w in workers:
                w.cancel()
            await asyncio.gather(*workers, return_exceptions=True)
            if not isinstance(e, asyncio.CancelledError):
                raise
            tally.interrupted = True
            status = "interrupted"
        finally:
            writer.close()
            self.progress.close()
            tally.finished = time.time()
            await self._close(env)
            if status == "failed":
                recording.end(files, status, tally)
        tally.graders = list(self.resolver.descriptions())
        return recording.finish(files, self.suite, opts, tally, status)

    async def _close(self, env: CaseEnv) -> None:
        for obj in [*env.providers.values(), *env.test_providers.values(), self.transport.created]:
            close = getattr(obj, "aclose", None)
            if close is not None:
                with contextlib.suppress(Exception):
                    await close()
