"""`--shard K/N`: run a deterministic 1/N of the cases (CI matrices), the rest left to the other shards.

    parse(text) -> (k, n)                 "2/4" -> (2, 4); UsageError for anything else
    select(cases, k, n) -> Iterator[Case] the cases whose expansion index i has i % n == k - 1
    count(total, k, n) -> int             how many of `total` consecutive indices shard k keeps

Selection is by the case's position in the expansion (promptfoo's order), which depends only on the config,
so it is the same on every machine and every run, and shards differ in size by at most one case. It applies
after the other filters (--filter-pattern, --filter-failing, --filter-first-n): the union of the N shards is
exactly the unsharded run's cases. `evalrun merge` combines the shards' results files.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

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


def select(cases: Iterable[Case], k: int, n: int) -> Iterator[Case]:
    """The cases of shard k of n; the filtered stream's own positions decide, so filters and shards compose."""
    want = k - 1
    for i, case in enumerate(cases):
        if i % n == want:
            yield case


def count(total: int, k: int, n: int) -> int:
    return max(0, (total - (k - 1) + n - 1) // n)
