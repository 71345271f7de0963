"""Result records (schemas/results.schema.json), scrubbed (secrets redacted, non-finite numbers null), and the
results file: appended as each case ends, locked against a second writer, read back (a torn last line left out)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from evalrun import jsonfast
from evalrun.credentials import Scrubber
from evalrun.errors import UsageError
from evalrun.types import AssertionResult, CaseResult, PromptSpec, Suite, TokenUsage

RESULTS_VERSION = 1


# ------------------------------------------------------------------ a result record
def tokens_dict(t: TokenUsage) -> dict[str, int]:
    return {"prompt": t.prompt, "completion": t.completion, "total": t.total, "cached": t.cached}


def assertion_dict(a: AssertionResult) -> dict[str, Any]:
    """`grader`, `tokens` and `cost` only for assertions that used a grader (keeps deterministic ones small)."""
    d: dict[str, Any] = {
        "type": a.type, "pass": a.pass_, "score": a.score, "threshold": a.threshold, "weight": a.weight,
        "reason": a.reason, "error": a.error, "metric": a.metric, "details": a.details,
    }
    if a.grader is not None or a.tokens.total or a.cost:
        d["grader"] = a.grader
        d["tokens"] = tokens_dict(a.tokens)
        d["cost"] = a.cost
    if a.lower_is_better:
        d["lower_is_better"] = True
    if a.value is not None and not a.metric:  # the assertion's name in `compare` (tally.score_names)
        d["value"] = a.value
    if a.children:
        d["children"] = [assertion_dict(c) for c in a.children]
    return d


def result_dict(r: CaseResult) -> dict[str, Any]:
    d = {
        "id": r.case_id, "index": r.index, "test_index": r.test_index, "repeat": r.repeat,
        "description": r.description, "provider": r.provider, "prompt_label": r.prompt_label,
        "prompt": r.prompt, "vars": r.vars, "output": r.output, "status": r.status, "pass": r.pass_,
        "score": r.score, "reason": r.reason, "error": r.error, "latency_ms": round(r.latency_ms, 3),
        "cached": r.cached, "tokens": tokens_dict(r.tokens), "cost": r.cost,
        "assertions": [assertion_dict(a) for a in r.assertions], "metadata": r.metadata,
    }
    if r.error_detail is not None:  # the whole message of an error cut to one line in `error`
        d["error_detail"] = r.error_detail
    return d


class Records:
    """A run's results as the results file holds them: the prompt's position and digest added, scrubbed."""

    def __init__(self, suite: Suite, scrub: Scrubber | None = None) -> None:
        self.scrub = scrub if scrub is not None else Scrubber.for_run(suite.providers)
        self._positions = {p.id: i for i, p in enumerate(suite.prompts)}
        self._prompts: dict[str, tuple[int | None, str]] = {}  # prompt id -> (prompt_index, prompt_sha)

    def encoded(self, result: CaseResult, prompt: PromptSpec) -> tuple[dict[str, Any], bytes]:
        """The record (for the tally) and its line (no line break)."""
        rec = result_dict(result)
        meta = self._prompts.get(prompt.id)
        if meta is None:  # `prompt_sha`, a digest of the template's text, tells an edited prompt across runs
            raw = prompt.raw if isinstance(prompt.raw, str) else json.dumps(prompt.raw, sort_keys=True,
                                                                             ensure_ascii=False)
            meta = self._prompts[prompt.id] = (self._positions.get(prompt.id),
                                               hashlib.sha1(raw.encode("utf-8")).hexdigest()[:12])
        rec["prompt_index"], rec["prompt_sha"] = meta
        return self.scrub.encoded(rec)


# ------------------------------------------------------------------ the results file
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

    def write(self, data: bytes) -> int:
        """Append one record's line; returns its byte offset."""
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


def new_lines(path: Path, pos: int) -> list[bytes]:
    """The complete lines another writer appended to `path` after byte `pos`."""
    if not path.exists():
        return []
    with open(path, "rb") as f:
        f.seek(pos)
        data = f.read()
    return data[:data.rfind(b"\n") + 1].splitlines(keepends=True)


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
    """"jsonl" (a results file) or "json" (a -o .json report); UsageError for another kind."""
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
    """(byte offset, record) of each record of a results file (`shown`: the file the user gave, for errors); a torn
    last line is left out."""
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
    """`path` itself, or a temporary results file of a .json report's records (removed when `stack` closes)."""
    if kind(path, key=key, hint=hint) == "jsonl":
        return path
    tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="evalrun-"))) / f"{path.stem}.jsonl"
    with open(tmp, "wb") as f:
        for rec in _json(path, key, hint):
            f.write(jsonfast.dumps(rec) + b"\n")
    return tmp
