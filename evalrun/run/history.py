"""The history of runs: `history.sqlite` in `.evalrun/` (docs/compare.md), one row per run, read-only where the
folder is; recording.py writes a run's files and rows."""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import socket
import sqlite3
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalrun.errors import UsageError
from evalrun.run.tally import iso_time

STATE_DIR = ".evalrun"
LAST_RUN = "last-run.jsonl"
DB_NAME = "history.sqlite"
_SCHEMA = """CREATE TABLE IF NOT EXISTS runs (seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT UNIQUE NOT NULL,
  status TEXT NOT NULL, started_at TEXT NOT NULL, finished_at TEXT, description TEXT, config_files TEXT NOT NULL,
  config_digest TEXT NOT NULL, git_commit TEXT, graders TEXT, options TEXT NOT NULL, summary TEXT,
  results_file TEXT NOT NULL, evalrun_version TEXT)"""


@dataclass(frozen=True)
class RunRecord:
    seq: int
    id: str
    status: str
    started_at: str
    finished_at: str | None
    description: str | None
    config_files: list[str]
    config_digest: str
    git_commit: str | None
    graders: list[str]
    options: dict[str, Any]
    summary: dict[str, Any] | None
    results_file: Path

    def as_dict(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self), "results_file": str(self.results_file)}


def config_digest(files: Sequence[str]) -> str:
    h = hashlib.sha256()
    for name in files:
        try:
            data = Path(name).read_bytes()
        except OSError:
            data = b"<unreadable>"
        h.update(name.encode("utf-8") + b"\0" + data + b"\0")
    return "sha256:" + h.hexdigest()[:16]


def config_folder(config_files: Sequence[str]) -> Path:
    """The folder of the first config file (the current folder when there is none)."""
    return Path(config_files[0]).resolve().parent if config_files else Path.cwd()


def git_commit(folder: Path) -> str | None:
    """HEAD of the git work tree holding `folder` (+dirty with uncommitted changes), or None."""
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=folder, capture_output=True, text=True,
                              timeout=5)
        if head.returncode != 0:
            return None
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=folder,
                               capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    commit = head.stdout.strip()[:12]
    return commit + ("+dirty" if dirty.returncode == 0 and dirty.stdout.strip() else "")


class History:
    """The history database of one `.evalrun` folder."""

    def __init__(self, state: Path) -> None:
        self.state = state
        self.path = state / DB_NAME
        #: run id -> why its row was left out, from the last list()
        self.malformed: dict[str, str] = {}

    def _connect(self, *, create: bool) -> sqlite3.Connection:
        if create:
            self.state.mkdir(parents=True, exist_ok=True)
        elif not self.path.exists():
            raise UsageError(f"no run history in {str(self.state)!r}",
                             hint="run `evalrun eval` first (without --no-history), or pass --dir / -c CONFIG "
                                  "to say which folder's history to read")
        if not create:
            return self._reader()
        conn = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
        conn.execute("PRAGMA busy_timeout=30000")
        if create:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(_SCHEMA)
        return conn

    def start(self, run_id: str, *, description: str | None, config_files: Sequence[str],
              options: dict[str, Any], results_file: Path, version: str) -> None:
        stored = str(results_file.resolve())  # relative to the .evalrun folder when inside it: the folder may move
        with contextlib.suppress(ValueError):
            stored = str(results_file.resolve().relative_to(self.state.resolve()))
        row = (run_id, "running", iso_time(), description, json.dumps(list(config_files)),
               config_digest(config_files), git_commit(config_folder(config_files)),
               json.dumps({**options, "process": {"pid": os.getpid(), "host": socket.gethostname()}}, default=str),
               stored, version)
        with contextlib.closing(self._connect(create=True)) as conn:
            conn.execute("INSERT INTO runs (id, status, started_at, description, config_files, config_digest, "
                         "git_commit, options, results_file, evalrun_version) VALUES (?,?,?,?,?,?,?,?,?,?) "
                         "ON CONFLICT(id) DO UPDATE SET status='running', finished_at=NULL",  # --resume
                         row)

    def finish(self, run_id: str, *, status: str, summary: dict[str, Any], graders: Sequence[str]) -> None:
        with contextlib.closing(self._connect(create=True)) as conn:
            conn.execute("UPDATE runs SET status=?, finished_at=?, summary=?, graders=? WHERE id=?",
                         (status, iso_time(), json.dumps(summary, default=str), json.dumps(list(graders)), run_id))

    def _reader(self) -> sqlite3.Connection:
        """A read-only connection that writes nothing: `mode=ro`, and `immutable=1` unless a run is writing now (a
        -wal file beside the database) in a folder we may write (SQLite then shares its -shm file)."""
        live = Path(f"{self.path}-wal").exists() and os.access(self.state, os.W_OK)
        uri = self.path.resolve().as_uri() + ("?mode=ro" if live else "?mode=ro&immutable=1")
        conn = sqlite3.connect(uri, uri=True, timeout=30.0, isolation_level=None)
        conn.execute("PRAGMA busy_timeout=30000")
        return conn

    def _unreadable(self, e: sqlite3.Error) -> UsageError:
        return UsageError(f"cannot read the run history {str(self.path)!r}: {e}",
                          hint="is it an evalrun history.sqlite? `evalrun eval` writes a new one if you move this "
                               "one away")

    def list(self, limit: int | None = None) -> list[RunRecord]:
        """Runs, newest first (read only); an unreadable database is a UsageError naming it."""
        sql = "SELECT * FROM runs ORDER BY seq DESC" + (" LIMIT ?" if limit else "")
        for attempt in range(3):  # an immutable read takes no lock: a run checkpointing that moment can tear it
            try:
                with contextlib.closing(self._connect(create=False)) as conn:
                    conn.row_factory = sqlite3.Row
                    rows = [dict(row) for row in conn.execute(sql, (limit,) if limit else ())]
                break
            except sqlite3.DatabaseError as e:
                if attempt < 2 and not isinstance(e, sqlite3.OperationalError):
                    time.sleep(0.05)
                    continue
                raise self._unreadable(e) from None
            except sqlite3.Error as e:
                raise self._unreadable(e) from None
        out = []
        self.malformed = {}
        for row in rows:
            try:
                out.append(self._record(dict(row)))
            except (KeyError, TypeError, ValueError, AttributeError) as e:  # a forged or damaged row: left out
                self.malformed[str(row.get("id"))] = f"its row in {str(self.path)!r} is malformed ({e})"
        return out

    def resolve(self, ref: str) -> RunRecord:
        """`latest`, `latest~N` (N ended runs before the latest: a run still going is never compared) or a run id
        (a unique prefix will do)."""
        runs = self.list()
        done = [r for r in runs if r.status in ("finished", "interrupted", "died")]
        shown = ref if len(ref) <= 80 else f"{ref[:60]}…"
        if ref == "latest" or ref.startswith("latest~"):
            back_text = ref.partition("~")[2] or "0"
            if not (back_text.isascii() and back_text.isdigit()):  # "²" is a digit to isdigit(), not int()
                raise UsageError(f"{shown!r} is not a run reference", hint="write latest, latest~1, latest~2, ...")
            back = int(back_text)
            if back >= len(done):
                raise UsageError(f"{shown!r}: the history in {str(self.state)!r} has {len(done)} finished "
                                 f"run{'s' if len(done) != 1 else ''}", hint="`evalrun runs` lists them")
            return done[back]
        matches = [r for r in runs if r.id == ref] or [r for r in runs if r.id.startswith(ref)]
        if len(matches) == 1:
            return matches[0]
        if not matches:
            raise UsageError(f"no run {shown!r} in {str(self.path)!r}",
                             hint="`evalrun runs` lists the run ids; a results file path works too")
        raise UsageError(f"{shown!r} matches {len(matches)} runs", hint="give more of the run id")

    def _record(self, row: dict[str, Any]) -> RunRecord:
        """The row as a RunRecord, every field's type checked (ValueError naming the first that is wrong): a
        history file can be shared or forged, and what it holds ends up in pages and terminals."""
        del row["evalrun_version"]
        for name in ("config_files", "graders", "options", "summary"):  # stored as JSON
            row[name] = json.loads(row[name]) if row[name] else None
        row["graders"] = row["graders"] or []
        row["options"] = row["options"] or {}
        _check_row(row)
        if row["status"] == "running" and _gone(row["options"].get("process")):
            row["status"] = "died"
        stored = Path(row["results_file"])
        row["results_file"] = stored if stored.is_absolute() else self.state / stored
        return RunRecord(**row)


_TEXT = ("id", "status", "started_at", "config_digest", "results_file")
_MAYBE_TEXT = ("finished_at", "description", "git_commit")
#: Summary fields the list and pages show: numbers (or absent).
_COUNTS = ("total", "passed", "failed", "errors", "pass_rate", "duration_s")


def _check_row(row: dict[str, Any]) -> None:
    """ValueError naming the first field of a history row whose type is not what evalrun writes."""
    def bad(name: str, want: str) -> ValueError:
        return ValueError(f"`{name}` is not {want}")

    if not isinstance(row.get("seq"), int):
        raise bad("seq", "an integer")
    for name in _TEXT:
        if not isinstance(row.get(name), str) or not row[name]:
            raise bad(name, "text")
    for name in _MAYBE_TEXT:
        if row.get(name) is not None and not isinstance(row[name], str):
            raise bad(name, "text")
    for name in ("config_files", "graders"):
        if not isinstance(row[name], list) or not all(isinstance(x, str) for x in row[name]):
            raise bad(name, "a list of text")
    if not isinstance(row["options"], dict):
        raise bad("options", "a mapping")
    summary = row["summary"]
    if summary is not None:
        if not isinstance(summary, dict):
            raise bad("summary", "a mapping")
        for name in _COUNTS:
            v = summary.get(name)
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))):
                raise bad(f"summary.{name}", "a number")


def _gone(process: Any) -> bool:
    """Is the process that started a run known to have ended without recording its end (this machine only)?"""
    if not isinstance(process, dict) or process.get("host") != socket.gethostname() or os.name == "nt":
        return False
    try:
        os.kill(int(process["pid"]), 0)
    except ProcessLookupError:
        return True
    except (OSError, ValueError, KeyError, TypeError):  # alive under another user, or not a pid
        return False
    return False
