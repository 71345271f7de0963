"""Output groups: the cases of one test that differ only by provider and prompt, run together (all in flight at
once, so no deadlock) so that select-best compares their outputs once per group."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Iterable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from evalrun.types import AssertionSpec, Case, TestSpec

CURRENT: ContextVar[OutputGroup | None] = ContextVar("evalrun_output_group", default=None)


@dataclass
class _Slot:
    """One cross-output assertion (by its key path) within one group."""

    entries: list[tuple[str, str]] = field(default_factory=list)  # (case id, output), in submission order
    ready: asyncio.Event = field(default_factory=asyncio.Event)
    result: asyncio.Future[Any] | None = None  # the comparison, started by the first case past `ready`
    computed_by: str | None = None


class OutputGroup:
    def __init__(self, case_ids: Iterable[str]) -> None:
        self.order = list(case_ids)  # promptfoo's order: provider x prompt
        self._done: set[str] = set()
        self._slots: dict[str, _Slot] = {}

    def _check(self, slot: _Slot) -> None:
        submitted = {cid for cid, _ in slot.entries}
        if all(cid in submitted or cid in self._done for cid in self.order):
            slot.ready.set()

    def case_done(self, case_id: str) -> None:
        """A case of the group ended (whatever its status)."""
        self._done.add(case_id)
        for slot in self._slots.values():
            self._check(slot)

    async def submit(self, key: str, case_id: str, output: str,
                     compute: Callable[[list[tuple[str, str]]], Awaitable[Any]]) -> tuple[Any, bool]:
        """Add this case's output for assertion `key`, wait for the group, and return (the comparison's result,
        whether this case computed it). `compute(entries)` runs once per group and assertion."""
        slot = self._slots.setdefault(key, _Slot())
        slot.entries.append((case_id, output))
        self._check(slot)
        await slot.ready.wait()
        if slot.result is None:
            entries = sorted(slot.entries, key=lambda e: self.order.index(e[0]))
            slot.result, slot.computed_by = asyncio.ensure_future(compute(entries)), case_id
        # every member of the group gets the same result or error; shielded: one member's cancellation ends no other's
        return await asyncio.shield(slot.result), slot.computed_by == case_id


def compares_outputs(test: TestSpec) -> bool:
    """The test holds an assertion that compares the outputs of its providers/prompts (select-best)."""
    return _any_compares(test.asserts)


def _any_compares(specs: Iterable[AssertionSpec]) -> bool:
    for s in specs:  # a plain loop: this runs once per case
        if getattr(s.handler, "compares_outputs", False) or (s.children and _any_compares(s.children)):
            return True
    return False


def group_key(case: Case) -> tuple[int, str, int]:
    """What the cases of one output group share: their test, vars and repeat."""
    return case.test.index, json.dumps(case.vars, sort_keys=True, default=str), case.repeat


def batches(stream: Iterable[Case]) -> Iterator[Case | list[Case]]:
    """The case stream with each group of a test that compares outputs as one list (groups are contiguous)."""
    pending: list[Case] = []
    for case in stream:
        if pending and group_key(pending[0]) != group_key(case):
            yield pending
            pending = []
        if compares_outputs(case.test):
            pending.append(case)
        else:
            yield case
    if pending:
        yield pending
