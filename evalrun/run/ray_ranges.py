"""The shards of `--executor ray` as contiguous ranges of the expansion, found by counting cases, not building them.

    cases(suite, repeat, k, n, first_n) -> Iterator[Case]   shard k of n: the cases at positions [start, stop)

Shard k holds positions `(k-1) x total / N` to `k x total / N` (the first `first_n` cases when given), each end
moved forward to the end of the `select-best` output group it would cut (the runner runs a group's cases together,
run/groups.py), so no group is split. A task walks the tests counting their cases (pairs x var combinations x
repeats, as expand.count_cases does) and builds Case objects only for the tests its range touches: on a matrix
suite (1,000 tests x 1,000 values) each task builds 1/N of the cases instead of all of them. The indices, ids and
values are those of expand.iter_cases (a test checks it). Streamed test files with no graded test (so no group)
skip even that walk: the counts the load-time check made give the range's tests, and the rows before them are
passed over unparsed. Filters that look at each case (--filter-pattern, --filter-failing) need the whole walk:
ray_task.shard_cases then selects as `--shard K/N` does.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from evalrun.types import Case, Suite


def _blocks(suite: Suite, repeat: int | None) -> Iterator[tuple[Any, int, int, int]]:
    """(test, its first case's position, its number of cases, its group size) for each test with cases."""
    from evalrun import expand
    from evalrun.run.runner import _compares_outputs

    reps = expand._repeat(suite, repeat)
    count = expand.case_counter(suite)
    index = 0
    for test in suite.tests:
        n_pairs, per_repeat = count(test)
        size = reps * per_repeat
        if size:
            yield test, index, size, n_pairs if _compares_outputs(test) else 1
            index += size


def cases(suite: Suite, repeat: int | None, k: int, n: int, first_n: int | None = None) -> Iterator[Case]:
    """The cases of shard k of n, in expansion order, built only for the tests the shard's range touches."""
    from evalrun import expand

    total = expand.count_cases(suite, repeat=repeat)
    if first_n is not None:
        total = min(total, first_n)
    cut_start, cut_stop = (k - 1) * total // n, k * total // n
    window = getattr(suite.tests, "window", None)
    if window is not None and not getattr(suite.tests, "graded", True):
        # streamed tests, none graded (so no select-best group to keep whole): the load-time counts find the
        # range's tests, and the rows before them are passed over unparsed (config/tests.py)
        yield from _counted(suite, repeat, window, cut_start, cut_stop)
        return
    start = stop = None  # the cuts moved to group ends, once their test is reached
    for test, index, size, group in _blocks(suite, repeat):
        end = index + size
        if start is None and cut_start < end:
            start = min(total, index + max(0, -(-(cut_start - index) // group) * group))
        if stop is None and cut_stop < end:
            stop = min(total, index + max(0, -(-(cut_stop - index) // group) * group))
        if start is None or end <= start:
            continue
        if stop is not None and index >= stop:
            return
        last = total if stop is None else stop
        for case in expand.iter_cases(replace(suite, tests=(test,)), repeat=repeat):
            at = index + case.index
            if at >= last:
                break
            if at >= start:
                yield replace(case, index=at)
        if end >= last:
            return


def _counted(suite: Suite, repeat: int | None, window: Any, start: int, stop: int) -> Iterator[Case]:
    from evalrun import expand

    if start >= stop:
        return
    lo = hi = None
    first = at = 0
    for t, c in enumerate(expand.test_case_counts(suite, repeat=repeat)):
        if lo is None and at + c > start:
            lo, first = t, at
        at += c
        if at >= stop:
            hi = t + 1
            break
    if lo is None or hi is None:  # pragma: no cover - the counts add up to the total
        return
    for case in expand.iter_cases(replace(suite, tests=window(lo, hi)), repeat=repeat, start=first):
        if case.index >= stop:
            return
        if case.index >= start:
            yield case
