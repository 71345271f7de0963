"""`evalrun eval ... | head -1` ends quietly: a broken stdout is switched to os.devnull and the run goes on
(reports, results, its own exit code); characters stdout cannot encode are printed as backslash escapes.
"""

from __future__ import annotations

import os
import sys
from typing import Any, TextIO, cast


class _GuardedStdout:
    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._broken = False

    def _divert(self) -> None:
        self._broken = True
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self._stream.fileno())  # the interpreter's final flush must not fail either
            os.close(devnull)
        except (OSError, ValueError):
            pass

    def write(self, text: str) -> int:
        if self._broken:
            return len(text)
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            self._divert()
            return len(text)

    def flush(self) -> None:
        if self._broken:
            return
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._divert()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def guard_stdout() -> None:
    """Install the guard on the process's real stdout (once; a replaced stdout, e.g. under pytest, is kept)."""
    if sys.stdout is not None and sys.stdout is sys.__stdout__:
        reconfigure = getattr(sys.stdout, "reconfigure", None)
        if reconfigure is not None:  # text it cannot encode (a lone surrogate, a C locale) printed escaped
            reconfigure(errors="backslashreplace")
        sys.stdout = cast(TextIO, _GuardedStdout(cast(TextIO, sys.stdout)))
