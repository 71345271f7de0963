"""The work of one Ray task: run one shard of a suite and stream its result records back (`--executor ray`).

    ShardJob(...)                      what a task needs: config paths, vars, run options, filters, shard (k, n)
    run_shard(job, skip) -> Iterator   batches of Record (index, status, JSONL line), as cases finish

The task loads the config itself (the driver's absolute path, else the same path relative to the worker's
working directory), runs part K of N (run/split.py) less the indices in `skip` with the ordinary Runner into a
scratch results file, and sends its new lines every `batch_s` seconds. Nothing here imports Ray.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import tempfile
from array import array
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from evalrun.types import Case, Suite

#: one finished case as sent to the driver: (case index, status, its results-file line)
Record = tuple[int, str, bytes]


@dataclass(frozen=True)
class ShardJob:
    configs: tuple[str, ...]  # absolute paths on the driver
    driver_cwd: str
    shard: tuple[int, int]  # (k, n)
    cli_vars: dict[str, Any] | None = None
    strict: bool | None = None
    #: RunOptions fields the task's Runner takes over (max_concurrency, repeat, delay_ms, timeout_s, ...)
    options: dict[str, Any] = field(default_factory=dict)
    filter_pattern: str | None = None
    filter_first_n: int | None = None
    #: --filter-failing, read on the driver: (case ids, fallback keys) as case_filters.failing_keys returns them
    failing: tuple[frozenset[str], frozenset[str]] | None = None
    batch_s: float = 0.5


def skip_bytes(indices: list[int]) -> bytes:
    """Case indices packed for `run_shard(skip=...)` (8 bytes each)."""
    return array("q", indices).tobytes()


def _skip_set(data: bytes) -> set[int]:
    got = array("q")
    got.frombytes(data)
    return set(got)


def resolve(path: str, driver_cwd: str) -> str:
    """The driver's path if the worker sees it, else the same path under the worker's working directory."""
    if os.path.exists(path):
        return path
    rel = os.path.relpath(path, driver_cwd)
    if not rel.startswith(os.pardir) and os.path.exists(rel):
        return os.path.abspath(rel)
    return path  # loading it raises the ConfigError that names it


def shard_cases(suite: Suite, job: ShardJob, skip: set[int] | None = None) -> Iterator[Case]:
    """The shard's cases in expansion order (those `eval --shard K/N` runs: run/split.py), less the `skip`
    indices."""
    from evalrun.run import case_filters, split

    stream, _ = split.cases(suite, job.options.get("repeat"), part=job.shard, first_n=job.filter_first_n,
                            select=case_filters.selector(job.filter_pattern, job.failing))
    return (case for case in stream if case.index not in skip) if skip else stream


class _Tail:
    """New complete lines of a file that another writer appends to."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.pos = 0

    def read(self) -> list[Record]:
        if not self.path.exists():
            return []
        with open(self.path, "rb") as f:
            f.seek(self.pos)
            data = f.read()
        end = data.rfind(b"\n") + 1
        self.pos += end
        out: list[Record] = []
        for line in data[:end].splitlines(keepends=True):
            rec = json.loads(line)
            out.append((int(rec.get("index", 0)), str(rec.get("status")), line))
        return out


def run_shard(job: ShardJob, skip: bytes = b"") -> Iterator[list[Record]]:
    """Run the shard; yield its records in batches as they are written (a Ray streaming-generator task)."""
    from evalrun import config
    from evalrun.run.options import RunOptions
    from evalrun.run.runner import Runner

    with tempfile.TemporaryDirectory(prefix="evalrun-ray-") as scratch:
        suite = config.load([resolve(p, job.driver_cwd) for p in job.configs], cli_vars=job.cli_vars,
                            strict=job.strict)
        # The scratch folder stands in for the config's: the task's `.evalrun/last-run.jsonl` pointer lands
        # there, never next to the user's config (which a local cluster shares).
        suite = replace(suite, files=(str(Path(scratch) / "shard.yaml"),))
        results = Path(scratch) / "shard.jsonl"
        opts = RunOptions(**job.options, results_file=results, history=False, progress=False)
        done = _skip_set(skip)
        runner = Runner(suite, opts, cases=lambda s, _repeat: shard_cases(s, job, done))
        tail = _Tail(results)
        loop = asyncio.new_event_loop()
        task = loop.create_task(runner.run())
        try:
            while not task.done():
                loop.run_until_complete(asyncio.wait({task}, timeout=job.batch_s))
                batch = tail.read()
                if batch:
                    yield batch
            task.result()  # a config error or a bug in the task: raised to the driver
            batch = tail.read()
            if batch:
                yield batch
        finally:
            if not task.done():  # the driver cancelled us (generator closed)
                task.cancel()
                with contextlib.suppress(BaseException):
                    loop.run_until_complete(task)
            loop.close()
