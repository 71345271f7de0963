"""`--shard K/N`: run a deterministic 1/N of the cases (CI matrices), the rest left to the other shards.

    parse(text) -> (k, n)                   "2/4" -> (2, 4); UsageError for anything else
    select(cases, k, n) -> Iterator[Case]   the cases of shard k: each unit of the stream (a case, or an output
                                            group) goes to the shard with the fewest cases so far (ties: the first)
    count(total, k, n, tests) -> int | None how many of `total` cases shard k keeps (None: the suite has output
                                            groups, whose sizes decide, or may have them)

A unit is one case, or the cases of one output group: the cases of one test, var combination and repeat that
differ only by provider and prompt, when the test compares their outputs (`select-best`, `max-score`; the runner
runs such a group together, run/groups.py). A group is never split between shards, so each shard compares
exactly the outputs the unsharded run compares. Without groups the rule is the case's position modulo N.

Selection depends only on the expansion (promptfoo's order), which depends only on the config, so it is the same
on every machine and every run; shards differ in size by at most one case (by at most one group's size when
there are groups). It applies after the other filters (--filter-pattern, --filter-failing, --filter-first-n):
the union of the N shards is exactly the unsharded run's cases. `evalrun merge` combines the shards' results.
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Iterable, Iterator
from typing import Any

from evalrun.errors import UsageError
from evalrun.types import Case

_SHARD = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


def parse(text: str) -> tuple[int, int]:
    m = _SHARD.match(text or "")
    k, n = (int(m.group(1)), int(m.group(2))) if m else (0, 0)
    if not m or n < 1 or not 1 <= k <= n:
        raise UsageError(f"{text!r} is not K/N with 1 <= K <= N", key="--shard",
                         hint="e.g. --shard 1/4 ... --shard 4/4 in four CI jobs, then `evalrun merge`")
    return k, n


def _grouped() -> Any:
    from evalrun.run.runner import _compares_outputs  # the runner's own test of "runs as a group"

    return _compares_outputs


def select(cases: Iterable[Case], k: int, n: int) -> Iterator[Case]:
    """The cases of shard k of n; the filtered stream's own units decide, so filters and shards compose."""
    if n == 1:
        yield from cases
        return
    from evalrun.run.groups import _key  # what makes cases one output group (the runner's batches)

    grouped = _grouped()
    want = k - 1
    loads = [(0, s) for s in range(n)]  # a heap of (cases given, shard): the least loaded shard first
    replace = heapq.heapreplace
    last_test: Any = None
    in_groups = False
    unit: list[Case] = []  # the output group being gathered
    unit_key: Any = None
    for case in cases:
        test = case.test
        if test is not last_test:  # consecutive cases share their test: ask once per test
            last_test, in_groups = test, grouped(test)
        if unit and (not in_groups or _key(case) != unit_key):
            load, s = loads[0]
            replace(loads, (load + len(unit), s))
            if s == want:
                yield from unit
            unit = []
        if in_groups:
            if not unit:
                unit_key = _key(case)
            unit.append(case)
            continue
        load, s = loads[0]
        replace(loads, (load + 1, s))
        if s == want:
            yield case
    if unit:
        load, s = loads[0]
        if s == want:
            yield from unit


def count(total: int, k: int, n: int, tests: Iterable[Any] = ()) -> int | None:
    """Cases of shard k among `total` consecutive ones; None when one of `tests` runs its cases as groups, or may
    (tests streamed from a file that hold a graded assertion: finding out would read the file once more)."""
    grouped = n > 1 and getattr(tests, "graded", True)  # only graded assertions (select-best) compare outputs
    if grouped and (not isinstance(tests, (list, tuple)) or any(map(_grouped(), tests))):
        return None
    return max(0, (total - (k - 1) + n - 1) // n)
