"""`evalrun cache stats|clear` through the CLI."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalrun.cache import ResponseCache
from evalrun.cli import main


def test_stats_without_cache_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["cache", "stats"]) == 0
    out = capsys.readouterr().out
    assert str(tmp_path / "cache") in out and "entries: 0" in out
    assert not (tmp_path / "cache").exists()  # asking creates nothing


def test_stats_and_clear(capsys: pytest.CaptureFixture[str]) -> None:
    cache = ResponseCache()
    cache.put("a", {"text": "1"}, model="openai/gpt-4o-mini")
    cache.put("b", {"text": "2"}, model="openai/gpt-4o-mini")
    cache.get("a")
    cache.close()
    assert main(["cache", "stats"]) == 0
    out = capsys.readouterr().out
    assert "entries: 2" in out and "hits: 1" in out and "openai/gpt-4o-mini: 2" in out
    assert main(["cache", "clear"]) == 0
    assert "cleared 2 cached responses" in capsys.readouterr().out
    assert main(["cache", "stats"]) == 0
    assert "entries: 0" in capsys.readouterr().out


def test_bad_action_is_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["cache", "purge"])
    assert info.value.code == 2
