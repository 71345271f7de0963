"""`Suite.tests` for suites with streamed test files: a re-iterable sequence of TestSpecs made on demand.

    TestList(items, default, count=, cases_per_repeat=)
    TestList.window(lo, hi)                              tests lo..hi-1 only (rows before them skipped unread)

Iterating reads the streamed files again and merges defaultTest into each test as it goes, so no pass holds more
than one test; `len()` and the case count come from the checking pass made at load time (build_suite), so
counting costs nothing. Indexing walks the stream (fine for small suites and tests; reports use iteration).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, overload

from evalrun.config.merge import merge_tests
from evalrun.config.rowspec import to_spec
from evalrun.config.testcases import TestItem, TestPart
from evalrun.config.teststream import StreamedTests
from evalrun.types import TestSpec


def iter_specs(items: list[TestItem], default: TestPart | None, lo: int = 0,
               hi: int | None = None) -> Iterator[TestSpec]:
    """TestSpecs in order (defaultTest merged), streamed files read row by row (config/rowspec.py); with `lo` /
    `hi`, only the tests numbered lo..hi-1 (the rows before are skipped unread, the file left at `hi`)."""
    i = 0
    for item in items:
        if hi is not None and i >= hi:
            return
        if isinstance(item, StreamedTests):
            i = yield from item.specs(i, default, lo=lo, hi=hi)
        else:
            if i >= lo:
                yield to_spec(merge_tests(default, item), i)
            i += 1


class TestList(Sequence[TestSpec]):
    """The tests of a suite, produced again on each iteration (memory flat in the number of tests)."""

    __test__ = False  # not a pytest test class

    def __init__(self, items: list[TestItem], default: TestPart | None, *, count: int,
                 cases_per_repeat: int, graded: bool = True, store_output_as: bool = False,
                 case_counts: Sequence[int] | None = None, window: tuple[int, int] | None = None) -> None:
        self._items = items
        self._default = default
        self._count = count
        #: Cases per test, one repeat (from the load-time pass; expand.test_case_counts reads it).
        self.case_counts = case_counts
        self._window = window  # (lo, hi): only tests lo..hi-1 (a worker's share, window())
        #: Cases one repeat expands to (computed in the load-time pass; expand.count_cases reads it).
        self.cases_per_repeat = cases_per_repeat
        #: False when no test has a graded assertion (the runner then skips a pass that checks grader ids).
        self.graded = graded
        #: True when a test sets options.storeOutputAs (the runner then runs cases one at a time).
        self.store_output_as = store_output_as

    def __repr__(self) -> str:
        return f"<TestList of {self._count} tests>"

    def __iter__(self) -> Iterator[TestSpec]:
        if self._window is not None:
            return iter_specs(self._items, self._default, *self._window)
        return iter_specs(self._items, self._default)

    def window(self, lo: int, hi: int) -> TestList:
        """Tests lo..hi-1 only, numbered as here (a worker's share of the run: run/workers.py)."""
        counts = self.case_counts
        part = counts[lo:hi] if counts is not None else None
        return TestList(self._items, self._default, count=hi - lo,
                        cases_per_repeat=sum(part) if part is not None else 0, graded=self.graded,
                        store_output_as=self.store_output_as, case_counts=part, window=(lo, hi))

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, index: int) -> TestSpec: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[TestSpec]: ...

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return list(self)[index]
        if index < 0:
            index += self._count
        if not 0 <= index < self._count:
            raise IndexError(index)
        index += self._window[0] if self._window else 0
        for spec in self:
            if spec.index == index:
                return spec
        raise IndexError(index)  # pragma: no cover - the file shrank since it was checked
