"""SIGTERM handled like Ctrl-C: what CI cancellation sends must also end with a summary, reports, results.

    with sigterm_as_sigint() as got:   # during the run, SIGTERM calls the current SIGINT handler
        ...
    got.term                           # True once a SIGTERM arrived (exit 143 instead of 130)
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

EXIT_SIGTERM = 143


@dataclass
class Received:
    term: bool = False


@contextlib.contextmanager
def sigterm_as_sigint() -> Iterator[Received]:
    got = Received()
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "SIGTERM"):
        yield got
        return

    def handler(signum: int, frame: Any) -> None:
        got.term = True
        current = signal.getsignal(signal.SIGINT)  # asyncio's (cancel the run) wrapped by watch_sigint
        if callable(current):
            current(signal.SIGINT, frame)
        else:
            raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield got
    finally:
        signal.signal(signal.SIGTERM, previous)
