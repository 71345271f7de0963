"""The parts of a run (`--shard K/N`, `--workers N`, `--executor ray`) and their results put back together
(`merge`, `Intake`); the rules are in docs/design-notes.md, "One notion of a part of a run"."""

from __future__ import annotations

import bisect
import contextlib
import heapq
import itertools
import re
import sys
import time
from array import array
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import BinaryIO

from evalrun import expand, jsonfast
from evalrun.assertions.model_graded import batches, compares_outputs
from evalrun.errors import UsageError
from evalrun.run import recording, store
from evalrun.run.casework import error_result
from evalrun.run.options import RunOptions
from evalrun.run.progress import Progress
from evalrun.run.store import Records
from evalrun.run.tally import RunOutcome, Tally
from evalrun.types import Case, Suite

_PART = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


def parse(text: str) -> tuple[int, int]:
    """`--shard K/N`."""
    m = _PART.match(text or "")
    k, n = (int(m.group(1)), int(m.group(2))) if m else (0, 0)
    if not m or n < 1 or not 1 <= k <= n:
        raise UsageError(f"{text!r} is not K/N with 1 <= K <= N", key="--shard",
                         hint="e.g. --shard 1/4 ... --shard 4/4 in four CI jobs, then `evalrun merge`")
    return k, n


def serial_reason(suite: Suite) -> str | None:
    """Why the run must go one case at a time, in order (promptfoo's concurrency 1), or None."""
    from evalrun.run.casework import uses_conversation

    if any(uses_conversation(p) for p in suite.prompts):
        return "prompts read `_conversation` (earlier turns of the same test sequence)"
    known = getattr(suite.tests, "store_output_as", None)  # a streamed TestList knows it from loading
    if known is None:
        known = any(t.options.get("storeOutputAs") for t in suite.tests)
    return "storeOutputAs makes tests depend on earlier outputs" if known else None


def cases(suite: Suite, repeat: int | None, *, part: tuple[int, int] | None = None,
          select: Callable[[Iterable[Case]], Iterator[Case]] | None = None,
          first_n: int | None = None) -> tuple[Iterator[Case], int | None]:
    """The run's cases in expansion order (part k of n when `part` is given) and their number when known up front;
    `select` is the filter that reads each case (`selector`), `first_n` keeps the first N after it."""
    if select is not None:
        stream = apply(expand.iter_cases(suite, repeat=repeat), select, first_n)
        return (stream if part is None else deal(stream, *part)), None
    if part is not None and part[1] > 1:
        window = windows(suite, repeat, part[1], first_n)[part[0] - 1]
        return window_cases(suite, repeat, window), len(window)
    total = expand.count_cases(suite, repeat=repeat)
    stream = apply(expand.iter_cases(suite, repeat=repeat), None, first_n)
    return stream, total if first_n is None else min(total, first_n)


# ------------------------------------------------------------------ filters that read each case
#: --filter-failing's kinds: the statuses each selects, and its flag
FAILING_KINDS = {"failing": (("fail", "error"), "--filter-failing"),
                 "failures": (("fail",), "--filter-failing-only"), "errors": (("error",), "--filter-errors-only")}


def failing_ids(path: str, kind: str = "failing") -> set[str]:
    """The ids of the cases in a results file or a -o .json report that failed or errored ("failing"), failed
    their assertions ("failures": --filter-failing-only) or were an ERROR ("errors": --filter-errors-only)."""
    statuses, flag = FAILING_KINDS[kind]
    if not Path(path).is_file():
        raise UsageError(f"{flag} {path!r}: no such file", key=flag, hint=f"pass {store.ACCEPTED}")
    records = store.records(Path(path), key=flag, hint=f"pass {store.ACCEPTED}")
    return {str(r["id"]) for r in records if r.get("status", "pass" if r.get("pass") else "fail") in statuses}


Selector = Callable[[Iterable[Case]], Iterator[Case]]


def selector(pattern: str | None = None, failing: str | Collection[str] | None = None,
             kind: str = "failing") -> Selector | None:
    """The filter of --filter-pattern and --filter-failing (a results file, or its failing_ids of that `kind`), or
    None; a bad regex or results file is a UsageError now."""
    rx = None
    if pattern:
        try:
            rx = re.compile(pattern)
        except re.error as e:
            raise UsageError(f"--filter-pattern is not a valid regular expression: {e}") from None
    ids = failing_ids(failing, kind) if isinstance(failing, str) else failing  # an empty set selects nothing
    if rx is None and ids is None:
        return None

    def select(cases: Iterable[Case]) -> Iterator[Case]:
        return (c for c in cases if (rx is None or rx.search(c.test.description or "")) and (ids is None or c.id in ids))

    return select


def apply(cases: Iterable[Case], select: Selector | None, first_n: int | None) -> Iterator[Case]:
    """The first `first_n` of the cases `select` keeps (None: all)."""
    it = select(cases) if select is not None else iter(cases)
    return it if first_n is None else itertools.islice(it, first_n)


# ------------------------------------------------------------------ contiguous parts
@dataclass(frozen=True)
class Window:
    """Cases [start, stop) of the expansion, held by tests [lo, hi), whose first case is at position `base`."""

    lo: int
    hi: int
    base: int
    start: int
    stop: int

    def __len__(self) -> int:
        return self.stop - self.start


def windows(suite: Suite, repeat: int | None, n: int, first_n: int | None = None) -> list[Window]:
    """The n parts of the run's first `first_n` cases (all when None), in order; a part may be empty."""
    counts = expand.test_case_counts(suite, repeat=repeat)
    return cut(counts, _grains(suite, counts), n, first_n)


def _grains(suite: Suite, counts: Sequence[int]) -> Iterator[int]:
    """Per test: the step at which it may be cut (its output groups' size)."""
    tests = suite.tests
    if hasattr(tests, "window"):  # streamed: only whether some test is graded is known without reading rows
        whole = getattr(tests, "graded", True)
        return (max(1, c) if whole else 1 for c in counts)
    pairs = expand.case_counter(suite)
    return (pairs(test)[0] if c and compares_outputs(test) else 1 for test, c in zip(tests, counts, strict=True))


def cut(counts: Sequence[int], grains: Iterable[int], n: int, first_n: int | None = None) -> list[Window]:
    """n contiguous windows over tests with these case counts, each cut moved to the nearest multiple of its test's
    grain (halfway: forward), so a group is never split."""
    total = sum(counts)
    if first_n is not None:
        total = max(0, min(total, first_n))
    targets = [j * total // n for j in range(1, n)]
    ends: list[int] = []
    index = 0
    for count, grain in zip(counts, grains, strict=True):
        end = index + count
        while len(ends) < len(targets) and targets[len(ends)] < end:
            t = targets[len(ends)]
            ends.append(min(total, index + (2 * (t - index) + grain) // (2 * grain) * grain))  # nearest
        if len(ends) == len(targets):
            break
        index = end
    bounds = [0, *ends, *[total] * (len(targets) - len(ends)), total]
    firsts = list(itertools.accumulate(counts, initial=0))  # each test's first case
    out: list[Window] = []
    for start, stop in itertools.pairwise(bounds):
        lo = bisect.bisect_right(firsts, start) - 1  # the test holding `start`
        out.append(Window(lo, bisect.bisect_left(firsts, stop), firsts[lo], start, stop) if start < stop
                   else Window(0, 0, start, start, start))
    return out


def window_suite(suite: Suite, window: Window) -> Suite:
    tests = suite.tests
    part = tests.window(window.lo, window.hi) if hasattr(tests, "window") else tuple(tests[window.lo:window.hi])
    return replace(suite, tests=part)


def window_cases(suite: Suite, repeat: int | None, window: Window) -> Iterator[Case]:
    """The window's cases, with the ids and indices of the whole run's."""
    if not window:
        return
    for case in expand.iter_cases(window_suite(suite, window), repeat=repeat, start=window.base):
        if case.index >= window.stop:
            return
        if case.index >= window.start:
            yield case


# ------------------------------------------------------------------ parts of a filtered stream
def deal(stream: Iterable[Case], k: int, n: int) -> Iterator[Case]:
    """Part k of n of a stream of unknown length: each case or group to the part with the fewest cases so far."""
    loads = [(0, s) for s in range(n)]  # a heap of (cases given, part): the least loaded part first
    for unit in batches(stream):
        cases = unit if isinstance(unit, list) else [unit]
        load, s = loads[0]
        heapq.heapreplace(loads, (load + len(cases), s))
        if s == k - 1:
            yield from cases


# ------------------------------------------------------------------ the parts' results as one run's
#: what `merge` accepts, for its messages
MERGE_HINT = ("pass the results file of each `evalrun eval --shard K/N` run (its --results-file JSONL) or its "
              "-o .json report")


def merge(paths: list[Path], out: Path) -> RunOutcome:
    """Every part's records written to `out` in expansion order, and their tally."""
    resolved_out = out.resolve()
    where = array("h")  # by case index: which file holds it (-1: none)
    offsets = array("q")  # by case index: its byte offset in that file
    tally = Tally()
    with contextlib.ExitStack() as stack:
        files: list[BinaryIO] = []
        for fno, path in enumerate(paths):
            if not path.is_file():
                raise UsageError(f"no results file {str(path)!r}", key="RESULTS_JSONL", hint=MERGE_HINT)
            if path.resolve() == resolved_out:
                raise UsageError(f"{str(path)!r} is both an input and the merged results file",
                                 key="--results-file", hint="choose another --results-file")
            jsonl = store.as_jsonl(path, stack, key="RESULTS_JSONL", hint=MERGE_HINT)
            files.append(stack.enter_context(open(jsonl, "rb")))
            for offset, rec in store.read_records(jsonl, key="RESULTS_JSONL", hint=MERGE_HINT, shown=path):
                index = int(rec.get("index", 0))
                if index >= len(where):
                    grow = index + 1 - len(where)
                    where.extend(array("h", [-1]) * grow)
                    offsets.extend(array("q", [0]) * grow)
                if where[index] >= 0:
                    raise UsageError(f"case {index} is in both {str(paths[where[index]])!r} and {str(path)!r}",
                                     key="RESULTS_JSONL", hint="merge the results files of one sharded run, each once")
                where[index], offsets[index] = fno, offset
        writer = store.ResultsWriter(out, append=False)
        try:
            for fno, offset in zip(where, offsets, strict=True):
                if fno < 0:
                    continue
                f = files[fno]
                f.seek(offset)
                line = f.readline()  # written as it is: the record is parsed once, for the tally
                rec = jsonfast.loads(line)
                tally.add(rec, writer.write(line if line.endswith(b"\n") else line + b"\n"))
        finally:
            writer.close()
    tally.finished = time.time()
    suite = Suite(description=f"merged from {len(paths)} results files", prompts=(), providers=(), tests=(),
                  files=tuple(str(p) for p in paths))
    return RunOutcome(suite, tally, out)


class Intake:
    """The driver's side of a run whose parts run elsewhere (--workers, Ray): each delivered record goes into the
    results file, tally and progress once; a failed part's undelivered cases become ERRORs; with --resume the
    records already in the results file count as delivered."""

    def __init__(self, suite: Suite, opts: RunOptions, progress: Progress) -> None:
        self.suite, self.opts, self.progress = suite, opts, progress
        self.files = recording.plan(suite, opts)
        self.tally = Tally()
        self.failed: dict[str, str] = {}  # part -> why it failed
        path = self.files.results_file
        self.writer = store.ResultsWriter(path, append=opts.resume)  # first: a torn last line is cut
        previous = store.read_records(path, key="--resume", hint=store.RESUME_HINT) if opts.resume else ()
        for offset, rec in previous:
            if int(rec.get("index", 0)) not in self.tally.rows:
                self.tally.add(rec, offset, resumed=True)
                progress.update(str(rec.get("status")))
        recording.begin(self.files, suite, opts)

    def delivered(self) -> bytes:
        """By case index: 1 when the case is in (for a part that skips them)."""
        return self.tally.rows.present() if len(self.tally.rows) else b""

    def take(self, line: bytes) -> None:
        """A delivered record's line, unless its case is already in."""
        rec = jsonfast.loads(line)
        if int(rec.get("index", 0)) not in self.tally.rows:
            self.tally.add(rec, self.writer.write(line))
            self.progress.update(str(rec.get("status")))

    def fail(self, part: str, runner: str, why: str, cases: Iterable[Case]) -> None:
        """Part `part` (run by a `runner`, e.g. "worker process") failed: its undelivered `cases` are ERRORs."""
        self.failed[part] = why
        records = Records(self.suite)
        for case in cases:
            if case.index not in self.tally.rows:
                rec = records.encoded(error_result(case, f"the {runner} running this case failed: {why}"), case.prompt)
                self.tally.add(rec[0], self.writer.write(rec[1] + b"\n"))
                self.progress.update("error")

    def close(self, status: str) -> None:
        """The results file closed; a run that raised recorded `failed` in the history."""
        self.writer.close()
        self.progress.close()
        if status == "failed":
            recording.end(self.files, status, self.tally)

    def outcome(self, status: str) -> RunOutcome:
        """The run's outcome (status `finished` or `interrupted`); a warning names each failed part."""
        for part, why in sorted(self.failed.items()):
            print(f"evalrun: warning: {part} failed: {why}; its undelivered cases are errors", file=sys.stderr)
        self.tally.interrupted = status == "interrupted"
        return recording.finish(self.files, self.suite, self.opts, self.tally, status)
