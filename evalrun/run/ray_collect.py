"""Driver side of `--executor ray`: the records the shard tasks send, each case kept once, spooled to disk.

    c = Collector(spool, progress)
    c.take(k, batch) -> int             append the batch's new cases to the spool (a case index already held,
                                        e.g. sent again by a retried task, is dropped); returns how many were new
    c.held(k) -> list[int]              the case indices shard k has delivered (a retry skips them)
    c.seed(records) -> int              a resumed run's earlier records, held as "shard 0" (every task skips them)
    c.fill_errors(cases, message)       an ERROR record for each case not delivered (a shard that failed for good)
    c.close()

The spool is an ordinary results file in arrival order; `split.merge` then writes it in expansion
order with the summary `evalrun merge` gives. Only a bitmap and the delivered indices are held in memory.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from evalrun.run.progress import Progress
from evalrun.run.ray_task import Record
from evalrun.run.serialize import error_records
from evalrun.run.store import ResultsWriter
from evalrun.types import Case, Suite


class Collector:
    def __init__(self, spool: Path, progress: Progress) -> None:
        self.spool = spool
        self._out = ResultsWriter(spool, append=False)
        self._seen = bytearray()
        self._held: dict[int, array[int]] = {}
        self.progress = progress
        self.duplicates = 0

    def _mark(self, index: int) -> bool:
        """True when the index is new (and marks it)."""
        if index >= len(self._seen):
            self._seen.extend(bytes(max(index + 1 - len(self._seen), len(self._seen) // 2, 1024)))
        if self._seen[index]:
            return False
        self._seen[index] = 1
        return True

    def take(self, k: int, batch: Iterable[Record]) -> int:
        new = 0
        held = self._held.setdefault(k, array("q"))
        for index, status, line in batch:
            if not self._mark(index):
                self.duplicates += 1
                continue
            self._out.write_bytes(line)
            held.append(index)
            self.progress.update(status)
            new += 1
        return new

    def seed(self, records: Iterable[tuple[int, dict[str, Any]]]) -> int:
        """Records of an earlier attempt at this run (--resume), kept as they are, as shard 0's."""
        held = self._held.setdefault(0, array("q"))
        count = 0
        for _, rec in records:
            index = int(rec.get("index", 0))
            if self._mark(index):
                self._out.write(rec)
                held.append(index)
                self.progress.update(str(rec.get("status")))
                count += 1
        return count

    def held(self, k: int) -> list[int]:
        return list(self._held.get(k, ()))

    def fill_errors(self, suite: Suite, cases: Iterable[Case], message: str) -> int:
        """ERROR records (serialised as the runner does) for the cases no task delivered."""
        added = 0
        for rec in error_records(suite, (c for c in cases if self._mark(c.index)), message):
            self._out.write(rec)
            self.progress.update("error")
            added += 1
        return added

    def close(self) -> None:
        self._out.close()
