"""Reading a run's results back (`merge`, `report`, `compare`, `--filter-failing`): the one owner of which files
hold result records and how to read them.

Read: a results JSONL file (`--results-file`, `.evalrun/runs/RUN_ID.jsonl`; a `-o .jsonl` report is the same)
and a `-o .json` report (`{version, meta, summary, results: [...]}`). Refused, with an error that names the file
and says what to pass: the CSV, JUnit XML and HTML reports (each keeps only part of a record) and anything else.
The kind is told from the content, not the extension.

    kind(path, ...) -> "jsonl" | "json"          UsageError for any other file
    records(path, ...) -> Iterator[dict]          every result record, in file order
    as_jsonl(path, stack, ...) -> Path            a results JSONL holding the records (the file itself, or a
                                                  temporary copy of a .json report's records)
    indexed(jsonl, ...) -> Iterator[(offset, rec)]  records with their byte offsets, for `store.read_at`

A results JSONL line that does not parse is an error at its line, except a torn last line (an interrupted
write), which is left out as everywhere else.
"""

from __future__ import annotations

import contextlib
import json
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from evalrun import jsonfast
from evalrun.errors import UsageError

#: What every command that reads results accepts (the end of its hints).
ACCEPTED = "a results file (--results-file, default .evalrun/runs/RUN_ID.jsonl) or a -o .json report"


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
    if not text:
        return "jsonl"  # an empty results file: a shard that ran no case
    lower = text[:512].lower()
    if text[:1] == b"<":
        what = "an HTML report" if b"<html" in lower or b"<!doctype html" in lower else \
            "a JUnit XML report" if b"<testsuite" in lower or b"<?xml" in lower else "an XML or HTML file"
        raise _refuse(path, what, key, hint)
    if text[:1] == b"[":
        return "json"
    if text[:1] == b"{":
        first = text.split(b"\n", 1)[0]
        try:
            rec = jsonfast.loads(first)
        except ValueError:
            return "json"  # a document over several lines: the -o .json report
        if isinstance(rec, dict) and "results" in rec and "id" not in rec:
            return "json"
        if isinstance(rec, dict) and "id" in rec:
            return "jsonl"
        raise _refuse(path, "JSON but not a result record (no `id`)", key, hint)
    if path.suffix.lower() == ".csv" or b"," in text.split(b"\n", 1)[0]:
        raise _refuse(path, "a CSV report", key, hint)
    raise _refuse(path, "not a results file", key, hint)


def _jsonl(path: Path, key: str, hint: str, shown: Path | None = None) -> Iterator[tuple[int, dict[str, Any]]]:
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
                    return  # a torn last line: an interrupted write
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
        for _, rec in _jsonl(path, key, hint):
            yield rec


def as_jsonl(path: Path, stack: contextlib.ExitStack, *, key: str = "RESULTS",
             hint: str = f"pass {ACCEPTED}") -> Path:
    """A results JSONL file holding `path`'s records: `path` itself, or a temporary copy of a .json report's
    records (removed when `stack` closes). Read it with `indexed`."""
    if kind(path, key=key, hint=hint) == "jsonl":
        return path
    tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="evalrun-"))) / f"{path.stem}.jsonl"
    with open(tmp, "wb") as f:
        for rec in _json(path, key, hint):
            f.write(jsonfast.dumps(rec) + b"\n")
    return tmp


def indexed(path: Path, *, key: str = "RESULTS", hint: str = f"pass {ACCEPTED}",
            shown: Path | None = None) -> Iterator[tuple[int, dict[str, Any]]]:
    """(byte offset, record) of each record of a results JSONL file (`as_jsonl`), for `store.read_at`; errors
    name `shown` (the file the user gave) when it differs."""
    yield from _jsonl(path, key, hint, shown)
