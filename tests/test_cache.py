"""The SQLite response cache and its key."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from evalrun.cache import FILE_NAME, ResponseCache, cache_key, default_cache_dir, key_params

MSGS = [{"role": "user", "content": "héllo"}]


def test_default_dir_env_precedence(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("EVALRUN_CACHE_DIR", str(tmp_path / "a"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "a"
    monkeypatch.delenv("EVALRUN_CACHE_DIR")
    assert default_cache_dir() == tmp_path / "xdg" / "evalrun"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_cache_dir() == tmp_path / "home" / ".cache" / "evalrun"


def test_key_is_stable_and_order_independent() -> None:
    a = cache_key("openai/m", MSGS, {"temperature": 0, "max_tokens": 5})
    b = cache_key("openai/m", MSGS, {"max_tokens": 5, "temperature": 0})
    assert a == b and len(a) == 64
    assert a != cache_key("openai/m2", MSGS, {"temperature": 0, "max_tokens": 5})
    assert a != cache_key("openai/m", [{"role": "user", "content": "hello"}], {"temperature": 0, "max_tokens": 5})
    assert a != cache_key("openai/m", MSGS, {"temperature": 0.1, "max_tokens": 5})
    assert a != cache_key("openai/m", MSGS, {"temperature": 0, "max_tokens": 5, "api_base": "http://x/v1"})


def test_key_matches_documented_recipe() -> None:
    import hashlib
    import json

    params = {"temperature": 0, "api_key": "sk-secret"}
    doc = json.dumps({"v": 1, "model": "openai/m", "messages": MSGS, "params": {"temperature": 0}},
                     sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert cache_key("openai/m", MSGS, params) == hashlib.sha256(doc.encode()).hexdigest()


def test_secrets_never_enter_the_key() -> None:
    params = {"temperature": 0, "max_tokens": 9, "api_key": "sk-1", "aws_secret_access_key": "s",
              "azure_ad_token": "t", "extra_headers": {"Authorization": "Bearer x", "X-Team": "a"}}
    assert key_params(params) == {"temperature": 0, "max_tokens": 9, "extra_headers": {"X-Team": "a"}}
    other = {**params, "api_key": "sk-2", "extra_headers": {"Authorization": "Bearer y", "X-Team": "a"}}
    assert cache_key("m", MSGS, params) == cache_key("m", MSGS, other)


def test_lazy_no_file_until_put(tmp_path: Path) -> None:
    path = tmp_path / "c" / FILE_NAME
    cache = ResponseCache(path)
    assert cache.get("k") is None
    assert cache.stats()["exists"] is False and cache.stats()["entries"] == 0
    assert cache.clear() == 0
    assert not path.parent.exists()
    cache.put("k", {"text": "v"}, model="openai/m")
    assert path.exists()


def test_put_get_stats_clear(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / FILE_NAME)
    cache.put("k1", {"text": "ünï", "n": 1}, model="openai/a")
    cache.put("k2", {"text": "b"}, model="openai/a")
    cache.put("k3", {"text": "c"}, model="ollama/b")
    cache.put("k3", {"text": "c2"}, model="ollama/b")  # replaced, not duplicated
    assert cache.get("k1") == {"text": "ünï", "n": 1}
    assert cache.get("k3") == {"text": "c2"}
    assert cache.get("nope") is None
    stats = cache.stats()
    assert stats["entries"] == 3 and stats["hits"] == 2 and stats["bytes"] > 0
    assert stats["models"] == {"openai/a": 2, "ollama/b": 1}
    assert cache.clear() == 3
    assert cache.get("k1") is None and cache.stats()["entries"] == 0


def test_persists_across_instances_and_uses_wal(tmp_path: Path) -> None:
    path = tmp_path / FILE_NAME
    ResponseCache(path).put("k", {"text": "kept"})
    cache = ResponseCache(path)
    assert cache.get("k") == {"text": "kept"}
    import sqlite3

    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_default_location_follows_env(tmp_path: Path) -> None:  # conftest sets EVALRUN_CACHE_DIR
    cache = ResponseCache()
    cache.put("k", {"text": "x"})
    assert cache.path == tmp_path / "cache" / FILE_NAME and cache.path.exists()


def test_concurrent_threads(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / FILE_NAME)
    other = ResponseCache(tmp_path / FILE_NAME)  # a second connection, like a second run

    def work(c: ResponseCache, start: int) -> None:
        for i in range(start, start + 50):
            c.put(f"k{i}", {"i": i})
            assert c.get(f"k{i}") == {"i": i}

    threads = [threading.Thread(target=work, args=(c, n * 50)) for n, c in enumerate([cache, other, cache, other])]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert cache.stats()["entries"] == 200


def test_connections_opening_a_new_file_at_once(tmp_path: Path) -> None:
    # two runs starting together on a fresh cache raced for the switch to WAL, and the loser got "database is
    # locked" at once (CI saw it: 150 of 200 entries); it failed in about 6% of these rounds before the fix
    def work(c: ResponseCache, start: int, errors: list[BaseException]) -> None:
        try:
            for i in range(start, start + 5):
                c.put(f"k{i}", {"i": i})
        except Exception as exc:  # collected and asserted on below
            errors.append(exc)

    for round_ in range(50):
        caches = [ResponseCache(tmp_path / f"r{round_}" / FILE_NAME) for _ in range(6)]
        errors: list[BaseException] = []
        threads = [threading.Thread(target=work, args=(c, n * 5, errors)) for n, c in enumerate(caches)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        assert caches[0].stats()["entries"] == 30
        for c in caches:
            c.close()


def test_unreadable_entry_is_a_miss(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / FILE_NAME)
    cache.put("k", {"text": "x"})
    import sqlite3

    with sqlite3.connect(tmp_path / FILE_NAME) as conn:
        conn.execute("UPDATE responses SET value = 'not json' WHERE key = 'k'")
    assert cache.get("k") is None
