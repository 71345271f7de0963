"""`Suite.tests` for suites with streamed test files: a re-iterable sequence of TestSpecs made on demand.

    TestList(items, default, count=, cases_per_repeat=)

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


def iter_specs(items: list[TestItem], default: TestPart | None) -> Iterator[TestSpec]:
    """TestSpecs in order (defaultTest merged), streamed files read row by row (config/rowspec.py)."""
    i = 0
    for item in items:
        if isinstance(item, StreamedTests):
            for spec in item.specs(i, default):
                yield spec
                i += 1
        else:
            yield to_spec(merge_tests(default, item), i)
            i += 1


class TestList(Sequence[TestSpec]):
    """The tests of a suite, produced again on each iteration (memory flat in the number of tests)."""

    __test__ = False  # not a pytest test class

    def __init__(self, items: list[TestItem], default: TestPart | None, *, count: int,
                 cases_per_repeat: int, graded: bool = True, store_output_as: bool = False) -> None:
        self._items = items
        self._default = default
        self._count = count
        #: Cases one repeat expands to (computed in the load-time pass; expand.count_cases reads it).
        self.cases_per_repeat = cases_per_repeat
        #: False when no test has a graded assertion (the runner then skips a pass that checks grader ids).
        self.graded = graded
        #: True when a test sets options.storeOutputAs (the runner then runs cases one at a time).
        self.store_output_as = store_output_as

    def __repr__(self) -> str:
        return f"<TestList of {self._count} tests>"

    def __iter__(self) -> Iterator[TestSpec]:
        return iter_specs(self._items, self._default)

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
        for spec in self:
            if spec.index == index:
                return spec
        raise IndexError(index)  # pragma: no cover - the file shrank since it was checked
