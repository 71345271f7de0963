"""Pure: Suite -> lazy iterator of Case in promptfoo's order (owner: config engine).

    iter_cases(suite) -> Iterator[Case]     tests x repeat x var combinations x providers x prompts
    count_cases(suite) -> int               arithmetic, builds no Case
"""

from __future__ import annotations

from collections.abc import Iterator

from evalrun.types import Case, Suite


def iter_cases(suite: Suite, *, repeat: int = 1) -> Iterator[Case]:
    raise NotImplementedError


def count_cases(suite: Suite, *, repeat: int = 1) -> int:
    raise NotImplementedError
