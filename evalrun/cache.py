"""The response cache: SQLite (WAL), successes only, keyed by the sha256 of the canonical request without its
secrets, in $EVALRUN_CACHE_DIR (else $XDG_CACHE_HOME/evalrun, else ~/.cache/evalrun)/responses.sqlite."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

#: Bumped when the key recipe or the stored value changes, so old entries are simply never hit.
KEY_VERSION = 1
FILE_NAME = "responses.sqlite"

#: Request parameters that never enter the key: credentials differ between people, not the answer.
SECRET_PARAMS = frozenset({
    "api_key", "azure_ad_token", "aws_access_key_id", "aws_secret_access_key", "aws_session_token",
    "vertex_credentials", "password", "client_secret", "token",
})
_SECRET_SUFFIXES = ("_api_key", "_secret", "_password", "_credentials", "_token")
#: Header names whose values are credentials (compared lower-case).
SECRET_HEADERS = frozenset({"authorization", "api-key", "x-api-key", "proxy-authorization", "cookie"})


def default_cache_dir() -> Path:
    """$EVALRUN_CACHE_DIR, else $XDG_CACHE_HOME/evalrun, else ~/.cache/evalrun."""
    if os.environ.get("EVALRUN_CACHE_DIR"):
        return Path(os.environ["EVALRUN_CACHE_DIR"]).expanduser()
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache").expanduser() / "evalrun"


def _split(params: Mapping[str, Any], secret: bool) -> dict[str, Any]:
    """The parameters without their credentials (secret=False), or only those (secret=True)."""
    out: dict[str, Any] = {}
    for name, value in params.items():
        if name in ("headers", "extra_headers") and isinstance(value, Mapping):
            out[name] = {k: v for k, v in value.items() if (str(k).lower() in SECRET_HEADERS) == secret}
        elif (name.lower() in SECRET_PARAMS or name.lower().endswith(_SECRET_SUFFIXES)) == secret:
            out[name] = value
    return out


def key_params(params: Mapping[str, Any]) -> dict[str, Any]:
    """The parameters that enter the cache key: all but secrets; credential headers dropped."""
    return _split(params, secret=False)


def credential_fingerprint(params: Mapping[str, Any]) -> str:
    """sha256 hex of what key_params leaves out (credentials), or "": in an in-flight request's key, so providers
    with different credentials never share a request (it would go out with the other provider's key)."""
    secret = _split(params, secret=True)
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
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.path, timeout=30.0, check_same_thread=False, isolation_level=None)
        _enable_wal(conn)
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, model TEXT, value TEXT NOT NULL,"
                     " created REAL NOT NULL, hits INTEGER NOT NULL DEFAULT 0)")
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

    def put(self, key: str, value: Mapping[str, Any], *, model: str | None = None) -> None:
        """Store (or replace) a JSON-serialisable value."""
        text = json.dumps(value, ensure_ascii=False, default=str)
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
