"""Shared fixtures. Tests never touch the network: LLM calls go to a fake server on 127.0.0.1."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakeserver import FakeOpenAI

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


def pytest_configure(config: pytest.Config) -> None:
    """A shell script's background job (`pytest &` without job control) starts with SIGINT ignored, and every
    child inherits that: evalrun then rightly ignores Ctrl-C. The Ctrl-C tests stand for a terminal's foreground
    process, so SIGINT gets Python's default handler back (children start with it; tests/test_clean_stops.py
    covers the ignored case on purpose)."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    """A fresh fake OpenAI-compatible server; script replies with `.script({...})`."""
    with FakeOpenAI() as server:
        yield server


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test gets its own response cache directory and no ambient grader or API keys."""
    monkeypatch.setenv("EVALRUN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("EVALRUN_GRADER", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-real")
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)  # else `evalrun eval` adds ::error annotations
