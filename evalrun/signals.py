"""Ctrl-C and SIGTERM on the command line: a clean stop at any moment, exit code 130 or 143 (why: docs/design-notes.md).
Imports only what the interpreter has loaded, so the handler is in place within milliseconds."""

from __future__ import annotations

import contextlib
import os
import signal

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~20 ms) before the handler is set
if TYPE_CHECKING:
    import asyncio
    from collections.abc import Awaitable, Iterator
    from typing import Any, TypeVar

    T = TypeVar("T")

EXIT_INTERRUPTED = 130
EXIT_SIGTERM = 143


def _exit_interrupted(signum: int, frame: Any) -> None:
    os.write(2, b"evalrun: interrupted\n")  # not print(): the handler may have interrupted a write to stderr
    os._exit(EXIT_INTERRUPTED)


@contextlib.contextmanager
def exit_on_interrupt() -> Iterator[None]:
    """Ctrl-C ends the process at once, exit code 130 (when SIGINT has Python's default handler)."""
    installed = False
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:  # not ignored, nor an embedding program's
        with contextlib.suppress(ValueError):  # not the main thread
            signal.signal(signal.SIGINT, _exit_interrupted)
            installed = True
    try:
        yield
    finally:
        if installed:
            signal.signal(signal.SIGINT, signal.default_int_handler)


@contextlib.contextmanager
def interrupt_raises() -> Iterator[None]:
    """Inside exit_on_interrupt: Ctrl-C raises KeyboardInterrupt again (asyncio.run makes it a cancellation)."""
    if signal.getsignal(signal.SIGINT) is not _exit_interrupted:
        yield
        return
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, _exit_interrupted)


class Received:  # not a dataclass: `evalrun --help` imports this module, and dataclasses costs ~40 ms
    def __init__(self) -> None:
        self.term = False  # a SIGTERM arrived
        self.task: asyncio.Task[Any] | None = None  # the run's (stoppable): SIGTERM cancels it if nothing else does


async def stoppable(main: Awaitable[T], got: Received) -> T:
    """Await `main` as the task a SIGTERM cancels when SIGINT is ignored (then asyncio has no Ctrl-C handler)."""
    import asyncio

    got.task = asyncio.current_task()
    try:
        return await main
    finally:
        got.task = None


@contextlib.contextmanager
def sigterm_as_sigint() -> Iterator[Received]:
    """The run: Ctrl-C raises KeyboardInterrupt (interrupt_raises) and SIGTERM does what Ctrl-C does."""
    got = Received()
    sigint_ignored = signal.getsignal(signal.SIGINT) is signal.SIG_IGN

    def handler(signum: int, frame: Any) -> None:
        if not sigint_ignored:
            got.term = True
            current = signal.getsignal(signal.SIGINT)  # asyncio's (cancels the run), wrapped by watch_sigint
            if callable(current):
                current(signal.SIGINT, frame)
                return
            raise KeyboardInterrupt
        # SIGINT ignored (a background job of a script): there is no Ctrl-C handler to call
        if got.term:  # a second SIGTERM: the stop under way is not waited for
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGTERM)
        got.term = True
        if got.task is None:  # no event loop: the --workers driver waits in time.sleep, then stops each worker
            raise KeyboardInterrupt
        got.task.cancel()  # what asyncio's Ctrl-C handler does
        got.task.get_loop().call_soon_threadsafe(lambda: None)  # wake the loop from its select()

    try:
        previous = signal.signal(signal.SIGTERM, handler)
    except (ValueError, AttributeError):  # not the main thread; no SIGTERM (Windows)
        yield got
        return
    try:
        with interrupt_raises():
            yield got
    finally:
        signal.signal(signal.SIGTERM, previous)
