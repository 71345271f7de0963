"""The response cache: SQLite (WAL), successes only, keyed by the sha256 of the canonical request without its
secrets, in $EVALRUN_CACHE_DIR (else $XDG_CACHE_HOME/evalrun, else ~/.cache/evalrun)/responses.sqlite.
What is stored is scrubbed of the request's credentials (and the environment's); the folder is made 0700, the
files 0600 (docs/security.md)."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from evalrun.credentials import Scrubber, env_secrets, param_secrets, split_params

#: Bumped when the key recipe or the stored value changes, so old entries are simply never hit.
KEY_VERSION = 1
FILE_NAME = "responses.sqlite"

def default_cache_dir() -> Path:
    """$EVALRUN_CACHE_DIR, else $XDG_CACHE_HOME/evalrun, else ~/.cache/evalrun."""
    if os.environ.get("EVALRUN_CACHE_DIR"):
        return Path(os.environ["EVALRUN_CACHE_DIR"]).expanduser()
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache").expanduser() / "evalrun"


def key_params(params: Mapping[str, Any]) -> dict[str, Any]:
    """The parameters that enter the cache key: all but secrets; credential headers dropped."""
    return split_params(params, secret=False)


def credential_fingerprint(params: Mapping[str, Any]) -> str:
    """sha256 hex of what key_params leaves out (credentials), or "": in an in-flight request's key, so providers
    with different credentials never share a request (it would go out with the other provider's key)."""
    secret = split_params(params, secret=True)
    if not any(secret.values()):
        return ""
    return hashlib.sha256(canonical_json(secret).encode("utf-8")).hexdigest()


def canonical_json(value: Any) -> str:
    """Sorted keys, no whitespace, UTF-8 kept; unknown objects as str()."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def cache_key(model: str, messages: Any, params: Mapping[str, Any]) -> str:
    """sha256 hex of canonical_json({"v": KEY_VERSION, "model", "messages", "params": key_params(params)})."""
    payload = {"v": KEY_VERSION, "model": model, "messages": messages, "params": key_params(params)}
    return hashlib.sha256(canonical_json(payload).encode("utf-8")).hexdigest()


class ResponseCache:
    """A key -> JSON value store in one SQLite file. Lazy: no file is created until the first put()."""

    def __init__(self, path: Path | None = None) -> None:
        self._path = Path(path) if path is not None else None
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.Lock()

    @property
    def path(self) -> Path:
        """The database file (resolved when first asked, so EVALRUN_CACHE_DIR set later still counts)."""
        if self._path is None:
            self._path = default_cache_dir() / FILE_NAME
        return self._path

    def _connect(self, create: bool) -> sqlite3.Connection | None:
        if self._conn is not None:
            return self._conn
        if not create and not self.path.exists():
            return None
        _private_dir(self.path.parent)
        fresh = not self.path.exists()
        if fresh:  # made 0600 before SQLite opens it: its -wal and -shm files take the database's mode
            with contextlib.suppress(OSError):
                os.close(os.open(self.path, os.O_CREAT | os.O_WRONLY, 0o600))
        conn = sqlite3.connect(self.path, timeout=30.0, check_same_thread=False, isolation_level=None)
        _enable_wal(conn)
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, model TEXT, value TEXT NOT NULL,"
                     " created REAL NOT NULL, hits INTEGER NOT NULL DEFAULT 0)")
        if fresh:
            _private_files(self.path)
        self._conn = conn
        return conn

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored value, or None (also when the cache file does not exist or the entry is unreadable)."""
        with self._lock:
            conn = self._connect(create=False)
            if conn is None:
                return None
            row = conn.execute("SELECT value FROM responses WHERE key = ?", (key,)).fetchone()
            if row is None:
                return None
            conn.execute("UPDATE responses SET hits = hits + 1 WHERE key = ?", (key,))
        try:
            value = json.loads(row[0])
        except ValueError:
            return None
        return value if isinstance(value, dict) else None

    def put(self, key: str, value: Mapping[str, Any], *, model: str | None = None,
            params: Mapping[str, Any] | None = None) -> None:
        """Store (or replace) a JSON-serialisable value, scrubbed of the credentials in `params` (the request's)
        and the environment's: a server that echoes a key never puts it on disk."""
        scrub = _scrubber(tuple(sorted({*env_secrets(), *param_secrets(params or {})})))
        text = json.dumps(scrub.walk(dict(value)), ensure_ascii=False, default=str)
        with self._lock:
            conn = self._connect(create=True)
            assert conn is not None
            conn.execute("INSERT OR REPLACE INTO responses (key, model, value, created, hits) VALUES (?, ?, ?, ?, 0)",
                         (key, model, text, time.time()))

    def stats(self) -> dict[str, Any]:
        """path, exists, entries, hits (lifetime cache hits), bytes on disk, per-model entry counts."""
        path = self.path
        with self._lock:
            conn = self._connect(create=False)
            if conn is None:
                return {"path": str(path), "exists": False, "entries": 0, "hits": 0, "bytes": 0, "models": {}}
            entries, hits = conn.execute("SELECT COUNT(*), COALESCE(SUM(hits), 0) FROM responses").fetchone()
            models = dict(conn.execute("SELECT COALESCE(model, '?'), COUNT(*) FROM responses GROUP BY model"
                                       " ORDER BY 2 DESC").fetchall())
        size = sum(p.stat().st_size for p in path.parent.glob(path.name + "*") if p.is_file())
        return {"path": str(path), "exists": True, "entries": int(entries), "hits": int(hits), "bytes": size,
                "models": models}

    def clear(self) -> int:
        """Delete every entry; returns how many there were. The file stays (empty, compacted)."""
        with self._lock:
            conn = self._connect(create=False)
            if conn is None:
                return 0
            (count,) = conn.execute("SELECT COUNT(*) FROM responses").fetchone()
            conn.execute("DELETE FROM responses")
            conn.execute("VACUUM")
        return int(count)


@functools.lru_cache(maxsize=32)
def _scrubber(secrets: tuple[str, ...]) -> Scrubber:
    """One Scrubber (its compiled pattern) per set of credentials, not one per stored reply."""
    return Scrubber(secrets)


def _private_dir(folder: Path) -> None:
    """Create the cache folder 0700 (an existing one is left as the user set it)."""
    if not folder.exists():
        folder.mkdir(parents=True, mode=0o700, exist_ok=True)
        with contextlib.suppress(OSError):
            folder.chmod(0o700)  # mkdir's mode is cut by the umask


def _private_files(path: Path) -> None:
    """The database and its -wal / -shm files 0600: replies may hold what the provider was sent."""
    for p in (path, *path.parent.glob(path.name + "-*")):
        with contextlib.suppress(OSError):
            p.chmod(0o600)


def _enable_wal(conn: sqlite3.Connection, attempts: int = 300) -> None:
    """Switch to WAL: two connections opening a new file race for it, and SQLite answers the loser "database is
    locked" at once, without its busy timeout; so retry briefly, and accept the mode another connection set."""
    for _ in range(attempts):
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) and "busy" not in str(exc):
                raise
            try:
                row = conn.execute("PRAGMA journal_mode").fetchone()
            except sqlite3.OperationalError:
                row = None
            if row and str(row[0]).lower() == "wal":
                return
            time.sleep(0.01)
    conn.execute("PRAGMA journal_mode=WAL")  # the last attempt raises what SQLite says
