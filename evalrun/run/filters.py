"""Case filters: --filter-pattern (test description regex), --filter-failing (a previous results file),
--filter-first-n (first N cases, after the other filters). All lazy: they wrap the case iterator."""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Collection, Iterable, Iterator
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


def apply(cases: Iterable[Case], *, pattern: str | None = None, failing: str | None = None,
          first_n: int | None = None) -> Iterator[Case]:
    it: Iterator[Case] = iter(cases)
    if pattern:
        try:
            rx = re.compile(pattern)
        except re.error as e:
            raise UsageError(f"--filter-pattern is not a valid regular expression: {e}") from None
        it = (c for c in it if rx.search(c.test.description or ""))
    if failing:
        it = keep_failing(it, *failing_keys(failing))
    if first_n is not None:
        it = itertools.islice(it, first_n)
    return it


def keep_failing(cases: Iterable[Case], ids: Collection[str], keys: Collection[str]) -> Iterator[Case]:
    """The cases `failing_keys` named (by id, or by provider, prompt label and vars for records without one)."""
    return (c for c in cases if c.id in ids or (keys and _key(c.provider.name, c.prompt.label, c.vars) in keys))
