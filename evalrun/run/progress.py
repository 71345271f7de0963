"""The progress line on stderr (a terminal only, CI unset, not --no-progress-bar): done/total, pass/fail/error and
the latest retry message; redrawn at most every 0.1 s."""

from __future__ import annotations

import os
import sys
import time
from typing import TextIO


def wanted(no_progress_bar: bool, stream: TextIO | None = None) -> bool:
    stream = stream or sys.stderr
    return not no_progress_bar and not os.environ.get("CI") and stream.isatty()


class Progress:
    def __init__(self, total: int | None, stream: TextIO | None = None, *, enabled: bool = True) -> None:
        self.total = total
        self.stream = stream or sys.stderr
        self.enabled = enabled
        self.done = self.passed = self.failed = self.errors = 0
        self.note_text = ""
        self._note_until = 0.0
        self._last = 0.0

    def update(self, status: str) -> None:
        self.done += 1
        self.passed += status == "pass"
        self.failed += status == "fail"
        self.errors += status not in ("pass", "fail")
        self.draw()

    def note(self, message: str) -> None:
        """A retry/back-off message, shown for a few seconds."""
        self.note_text = message
        self._note_until = time.monotonic() + 5.0
        self.draw(force=True)

    def draw(self, force: bool = False) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if not force and now - self._last < 0.1 and self.done != self.total:
            return
        self._last = now
        width = 24
        if self.total:
            filled = int(width * min(self.done, self.total) / self.total)
            bar = "[" + "#" * filled + "." * (width - filled) + f"] {self.done}/{self.total}"
        else:
            bar = f"{self.done} done"
        line = f"{bar}  pass {self.passed}  fail {self.failed}  error {self.errors}"
        if self.note_text and now < self._note_until:
            line += f"  | {self.note_text}"
        self.stream.write("\r\x1b[2K" + line[:200])
        self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self.draw(force=True)
            self.stream.write("\n")
            self.stream.flush()


class LoadProgress:
    """`evalrun: checking tests: 30,000` on stderr while a large test file loads (a terminal only)."""

    def __init__(self, enabled: bool, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        self.enabled = enabled
        self.shown = False

    def __call__(self, checked: int) -> None:
        if self.enabled:
            self.stream.write(f"\revalrun: checking tests: {checked:,}")
            self.stream.flush()
            self.shown = True

    def done(self) -> None:
        if self.shown:
            self.stream.write("\r\033[K")
            self.stream.flush()
            self.shown = False
