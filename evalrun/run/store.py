"""The results file: one JSON line per finished case, appended as each case ends (flushed at least every
`flush_s` seconds; locked, so a second run told to write it stops instead of truncating it), and results files
or `-o .json` reports read back (other report formats refused, a torn last line left out).
"""

from __future__ import annotations

import contextlib
import json
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from evalrun import jsonfast
from evalrun.errors import UsageError


class ResultsWriter:
    """Writes a run's results file; a file another run writes, or one that cannot be written, is a UsageError."""

    def __init__(self, path: Path, *, append: bool, flush_s: float = 0.5) -> None:
        self.path = path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            # 256 KiB buffered (a record is ~1 KiB): fewer system calls than the default 8 KiB
            self._f: BinaryIO = open(path, "ab", buffering=1 << 18)  # noqa: SIM115 - closed in close()
        except OSError as e:
            raise UsageError(f"cannot write the results file {str(path)!r}: {e.strerror or e}",
                             key="--results-file", hint="choose another path with --results-file") from None
        with contextlib.suppress(ImportError):  # Windows: no advisory lock
            import fcntl

            try:  # before truncating: never cut a file another run is writing
                fcntl.flock(self._f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                self._f.close()
                raise UsageError(f"the results file {str(path)!r} is being written by another run",
                                 key="--results-file", hint="wait for it, or leave out --results-file: each run "
                                 "then writes a file of its own") from None
        if not append:
            self._f.truncate(0)
        elif self._f.seek(0, 2):  # cut a last line that was not completely written
            with open(path, "rb") as f:
                self._f.truncate(sum(len(line) for line in f if line.endswith(b"\n")))
        self.offset = self._f.seek(0, 2)
        self.flush_s = flush_s
        self._last_flush = time.monotonic()

    def write(self, record: dict[str, Any]) -> int:
        """Append one record; returns its byte offset."""
        return self.write_bytes(jsonfast.dumps(record) + b"\n")

    def write_bytes(self, data: bytes) -> int:
        at = self.offset
        self._f.write(data)
        self.offset += len(data)
        now = time.monotonic()
        if now - self._last_flush >= self.flush_s:
            self._f.flush()
            self._last_flush = now
        return at

    def close(self) -> None:
        if not self._f.closed:
            self._f.flush()
            self._f.close()


def new_lines(path: Path, pos: int) -> list[tuple[dict[str, Any], bytes]]:
    """(record, line) of each complete line another writer appended to `path` after byte `pos`."""
    if not path.exists():
        return []
    with open(path, "rb") as f:
        f.seek(pos)
        data = f.read()
    return [(jsonfast.loads(line), line) for line in data[:data.rfind(b"\n") + 1].splitlines(keepends=True)]


def read_at(f: BinaryIO, offset: int) -> dict[str, Any]:
    f.seek(offset)
    rec: dict[str, Any] = jsonfast.loads(f.readline())
    return rec


# ------------------------------------------------------------------ reading results back
#: What every command that reads results accepts (the end of its hints).
ACCEPTED = "a results file (--results-file, default .evalrun/runs/RUN_ID.jsonl) or a -o .json report"
RESUME_HINT = "--resume continues a run from its own results file; to start afresh, run without --resume"


def _refuse(path: Path, what: str, key: str, hint: str) -> UsageError:
    return UsageError(f"{str(path)!r} is {what}: it holds no result records to read back", key=key,
                      hint=f"{hint}; CSV, JUnit XML and HTML reports keep only part of each result")


def kind(path: Path, *, key: str = "RESULTS", hint: str = f"pass {ACCEPTED}") -> str:
    """"jsonl" (a results file) or "json" (a -o .json report); UsageError for a missing file or another kind."""
    try:
        with open(path, "rb") as f:
            head = f.read(65536)
    except OSError as e:
        raise UsageError(f"cannot read {str(path)!r}: {e.strerror or e}", key=key, hint=hint) from None
    text = head.removeprefix(b"\xef\xbb\xbf").lstrip()
    first = text.split(b"\n", 1)[0]
    if not text:
        return "jsonl"  # an empty results file: a shard that ran no case
    if text[:1] == b"[":
        return "json"
    if text[:1] == b"{":
        try:
            rec = jsonfast.loads(first)
        except ValueError:
            return "json"  # a document over several lines: the -o .json report
        if isinstance(rec, dict) and ("id" in rec or "results" in rec):
            return "jsonl" if "id" in rec else "json"
        raise _refuse(path, "JSON but not a result record (no `id`)", key, hint)
    lower = text[:512].lower()
    if text[:1] == b"<":
        what = "an HTML report" if b"<html" in lower or b"<!doctype html" in lower else \
            "a JUnit XML report" if b"<testsuite" in lower or b"<?xml" in lower else "an XML or HTML file"
    else:
        what = "a CSV report" if path.suffix.lower() == ".csv" or b"," in first else "not a results file"
    raise _refuse(path, what, key, hint)


def read_records(path: Path, *, key: str = "RESULTS", hint: str = f"pass {ACCEPTED}",
                 shown: Path | None = None) -> Iterator[tuple[int, dict[str, Any]]]:
    """(byte offset, record) of each record of a results JSONL file; errors name `shown` (the file the user gave)
    when it differs. A torn last line (an interrupted write) is left out."""
    offset = 0
    with open(path, "rb") as f:
        for lineno, line in enumerate(f, 1):
            at = offset
            offset += len(line)
            if not line.strip():
                continue
            try:
                rec = jsonfast.loads(line)
            except ValueError:
                if not line.endswith(b"\n"):
                    return
                raise UsageError(f"{shown or path}:{lineno}: not a JSON result record", key=key, hint=hint) from None
            if not isinstance(rec, dict) or "id" not in rec:
                raise UsageError(f"{shown or path}:{lineno}: not a result record (no `id`)", key=key, hint=hint)
            yield at, rec


def _json(path: Path, key: str, hint: str) -> list[dict[str, Any]]:
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError) as e:
        raise UsageError(f"cannot read results from {str(path)!r}: {e}", key=key, hint=hint) from None
    results = data.get("results") if isinstance(data, dict) else data
    if not isinstance(results, list) or not all(isinstance(r, dict) and "id" in r for r in results):
        raise _refuse(path, "JSON without a `results` list of result records", key, hint)
    return results


def records(path: Path, *, key: str = "RESULTS", hint: str = f"pass {ACCEPTED}") -> Iterator[dict[str, Any]]:
    """Every result record of a results file or a -o .json report, in file order."""
    if kind(path, key=key, hint=hint) == "json":
        yield from _json(path, key, hint)
    else:
        for _, rec in read_records(path, key=key, hint=hint):
            yield rec


def as_jsonl(path: Path, stack: contextlib.ExitStack, *, key: str = "RESULTS",
             hint: str = f"pass {ACCEPTED}") -> Path:
    """A results JSONL file holding `path`'s records: `path` itself, or a temporary copy of a .json report's
    records (removed when `stack` closes)."""
    if kind(path, key=key, hint=hint) == "jsonl":
        return path
    tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="evalrun-"))) / f"{path.stem}.jsonl"
    with open(tmp, "wb") as f:
        for rec in _json(path, key, hint):
            f.write(jsonfast.dumps(rec) + b"\n")
    return tmp
