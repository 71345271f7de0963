"""The results file: one JSON object per finished case, appended as each case ends.

Writes are buffered and flushed at least every `flush_s` seconds (no per-case fsync), so a crash loses at most
that window and Ctrl-C loses nothing. Each record's byte offset is kept so reports can re-read results in order
without holding them in memory. `read_records` tolerates a torn last line (an interrupted write). A writer holds an exclusive lock on its file
(where the platform has `fcntl`), so a second run told to write the same file stops with `ResultsFileBusy`
instead of truncating results the first run is still writing and reading back.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from evalrun import jsonfast

#: Bytes buffered before a write reaches the file (besides the flush every `flush_s`): fewer system calls
#: than the default 8 KiB (a record is ~1 KiB).
_BUFFER = 1 << 18


class ResultsFileBusy(Exception):
    """Another process is writing this results file."""


def _lock(f: BinaryIO) -> None:
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: no advisory lock
        return
    try:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        f.close()
        raise ResultsFileBusy(str(f.name)) from None


class ResultsWriter:
    def __init__(self, path: Path, *, append: bool, flush_s: float = 0.5) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._f: BinaryIO = open(path, "ab", buffering=_BUFFER)  # noqa: SIM115 - closed in close()
        _lock(self._f)  # before truncating: never cut a file another run is writing
        if append:
            _drop_torn_tail(path)
        else:
            self._f.truncate(0)
        self.offset = self._f.seek(0, 2)
        self.flush_s = flush_s
        self._last_flush = time.monotonic()

    def write(self, record: dict[str, Any]) -> int:
        """Append one record; returns its byte offset."""
        return self.write_bytes(jsonfast.dumps(record) + b"\n")

    def write_line(self, data: bytes) -> int:
        """Append one record already encoded by jsonfast.dumps (its line break added); returns its offset."""
        return self.write_bytes(data + b"\n")

    def write_bytes(self, data: bytes) -> int:
        at = self.offset
        self._f.write(data)
        self.offset += len(data)
        now = time.monotonic()
        if now - self._last_flush >= self.flush_s:
            self._f.flush()
            self._last_flush = now
        return at

    def append_file(self, path: Path) -> int:
        """Append another results file (a worker's), less a last line not completely written (a worker killed
        mid-write); returns the byte offset it starts at."""
        import shutil

        _drop_torn_tail(path)
        self._f.flush()
        at = self.offset
        with open(path, "rb") as src:
            shutil.copyfileobj(src, self._f.raw, 1 << 20)  # type: ignore[attr-defined]
            self.offset += src.tell()
        return at

    def close(self) -> None:
        if not self._f.closed:
            self._f.flush()
            self._f.close()


def open_results(path: Path, *, append: bool = False) -> ResultsWriter:
    """A run's results file opened for writing; a file another run writes, or one that cannot be written, is a
    usage error."""
    from evalrun.errors import UsageError

    try:
        return ResultsWriter(path, append=append)
    except ResultsFileBusy:
        raise UsageError(f"the results file {str(path)!r} is being written by another run", key="--results-file",
                         hint="wait for it, or leave out --results-file: each run then writes a file of its own") \
            from None
    except OSError as e:
        raise UsageError(f"cannot write the results file {str(path)!r}: {e.strerror or e}", key="--results-file",
                         hint="choose another path with --results-file") from None


def _drop_torn_tail(path: Path) -> None:
    """Cut a last line that was not completely written (no trailing newline)."""
    with open(path, "rb+") as f:
        size = f.seek(0, 2)
        if size == 0:
            return
        f.seek(size - 1)
        if f.read(1) == b"\n":
            return
        pos, keep = size, 0
        while pos > 0:
            step = min(65536, pos)
            pos -= step
            f.seek(pos)
            chunk = f.read(step)
            nl = chunk.rfind(b"\n")
            if nl >= 0:
                keep = pos + nl + 1
                break
        f.truncate(keep)


def read_records(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(offset, record) for each complete, parseable line of a results JSONL file."""
    offset = 0
    with open(path, "rb") as f:
        for line in f:
            at = offset
            offset += len(line)
            if not line.endswith(b"\n"):
                break
            try:
                rec = jsonfast.loads(line)
            except ValueError:
                continue
            if isinstance(rec, dict) and "id" in rec:
                yield at, rec


def read_at(f: BinaryIO, offset: int) -> dict[str, Any]:
    f.seek(offset)
    rec: dict[str, Any] = jsonfast.loads(f.readline())
    return rec
