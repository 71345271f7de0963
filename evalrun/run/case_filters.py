"""The filters that read each case: --filter-pattern (a regex on the test description) and --filter-failing (the
failed or errored cases of a previous results file), then --filter-first-n (the first N cases they keep).

    selector(pattern, failing) -> Callable[[cases], cases] | None     None when neither filter is given
    apply(cases, select, first_n) -> Iterator[Case]                   the selector, then the first N
    failing_keys(path) -> (ids, keys)                                 what --filter-failing keeps, read once

Both are lazy: they wrap the case iterator."""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable, Collection, Iterable, Iterator
from pathlib import Path
from typing import Any

from evalrun.errors import UsageError
from evalrun.types import Case


def _key(provider: str, prompt_label: str, vars: Any) -> str:
    return json.dumps([provider, prompt_label, vars], sort_keys=True, default=str)


def failing_keys(path: str) -> tuple[set[str], set[str]]:
    """(ids, fallback keys) of the failed or errored cases in a results .jsonl file or a -o .json report.

    A record with an `id` is matched by id only (cases with equal vars may differ in their assertions);
    only records without one fall back to (provider, prompt label, vars)."""
    from evalrun.run import readback

    if not Path(path).is_file():
        raise UsageError(f"--filter-failing {path!r}: no such file", key="--filter-failing",
                         hint=f"pass {readback.ACCEPTED}")
    records = readback.records(Path(path), key="--filter-failing", hint=f"pass {readback.ACCEPTED}")
    ids: set[str] = set()
    keys: set[str] = set()
    for r in records:
        if not isinstance(r, dict) or r.get("status", "pass" if r.get("pass") else "fail") == "pass":
            continue
        if r.get("id"):
            ids.add(str(r["id"]))
        else:
            keys.add(_key(str(r.get("provider")), str(r.get("prompt_label") or ""), r.get("vars") or {}))
    return ids, keys


Selector = Callable[[Iterable[Case]], Iterator[Case]]


def selector(pattern: str | None = None, failing: str | tuple[Collection[str], Collection[str]] | None = None) \
        -> Selector | None:
    """The filter of --filter-pattern and --filter-failing (a results file, or its failing_keys already read), or
    None when neither is given. A bad regex or results file is a UsageError now, before any case."""
    rx = None
    if pattern:
        try:
            rx = re.compile(pattern)
        except re.error as e:
            raise UsageError(f"--filter-pattern is not a valid regular expression: {e}") from None
    keys = failing_keys(failing) if isinstance(failing, str) and failing else failing or None
    if rx is None and keys is None:
        return None

    def select(cases: Iterable[Case]) -> Iterator[Case]:
        it: Iterator[Case] = iter(cases)
        if rx is not None:
            it = (c for c in it if rx.search(c.test.description or ""))
        if keys is not None:
            it = keep_failing(it, *keys)
        return it

    return select


def apply(cases: Iterable[Case], select: Selector | None, first_n: int | None) -> Iterator[Case]:
    """The cases `select` keeps (all when None), then only the first `first_n` of them (all when None)."""
    it = select(cases) if select is not None else iter(cases)
    return it if first_n is None else itertools.islice(it, first_n)


def keep_failing(cases: Iterable[Case], ids: Collection[str], keys: Collection[str]) -> Iterator[Case]:
    """The cases `failing_keys` named (by id, or by provider, prompt label and vars for records without one)."""
    return (c for c in cases if c.id in ids or (keys and _key(c.provider.name, c.prompt.label, c.vars) in keys))
