"""release_free_memory: glibc's malloc_trim where there is one, a no-op elsewhere (never an error)."""

from __future__ import annotations

import sys

import pytest

from evalrun.run import runner


def test_runs_on_linux_and_says_so() -> None:
    ran = runner.release_free_memory()
    assert isinstance(ran, bool)
    if sys.platform.startswith("linux"):
        import ctypes

        try:
            ctypes.CDLL("libc.so.6").malloc_trim  # noqa: B018 - glibc present?
        except (OSError, AttributeError):
            return
        assert ran


def test_other_platforms_are_a_no_op(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner.sys, "platform", "darwin")
    assert runner.release_free_memory() is False
