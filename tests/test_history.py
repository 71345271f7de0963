"""Run history: each `evalrun eval` gets its own results file and a row in .evalrun/history.sqlite."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from evalrun.cli import main
from evalrun.errors import UsageError
from evalrun.run import recording
from evalrun.run.history import History

CONFIG = """description: history test
providers: [echo]
prompts: ["Say {{q}}"]
tests:
  - vars: {q: hello}
    assert: [{type: contains, value: hello}]
  - vars: {q: world}
    assert: [{type: contains, value: zzz}]
"""


@pytest.fixture
def cfg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    sub = tmp_path / "suite"
    sub.mkdir()
    path = sub / "evalrun.yaml"
    path.write_text(CONFIG)
    monkeypatch.chdir(tmp_path)  # the history goes next to the config, not into the current folder
    return path


def _eval(*args: str) -> int:
    return main(["eval", "--no-progress-bar", "--no-table", *args])


def test_each_run_is_recorded_next_to_the_config(cfg: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _eval(str(cfg)) == 100
    assert _eval(str(cfg)) == 100
    state = cfg.parent / ".evalrun"
    assert not (cfg.parent.parent / ".evalrun").exists()
    runs = History(state).list()
    assert [r.status for r in runs] == ["finished", "finished"]
    newest, older = runs
    assert newest.results_file != older.results_file and newest.results_file.is_file()
    assert newest.summary is not None and newest.summary["passed"] == 1 and newest.summary["failed"] == 1
    assert newest.config_digest == older.config_digest and newest.config_digest.startswith("sha256:")
    assert newest.options["repeat"] == 1 and newest.description == "history test"
    # last-run.jsonl points at the newest run's own file
    assert recording.last_run(state) == newest.results_file.resolve()
    assert History(state).resolve("latest").id == newest.id
    assert History(state).resolve("latest~1").id == older.id
    # a unique prefix resolves (two runs in one second share 16 characters, and by chance more)
    prefix = next(older.id[:n] for n in range(18, len(older.id) + 1) if not newest.id.startswith(older.id[:n]))
    assert History(state).resolve(prefix).id == older.id
    with sqlite3.connect(state / "history.sqlite") as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    capsys.readouterr()
    assert main(["runs", "-c", str(cfg)]) == 0
    out = capsys.readouterr().out
    assert newest.id in out and older.id in out and "50.0%" in out
    assert main(["runs", "--dir", str(cfg.parent), "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [r["id"] for r in listed] == [newest.id, older.id]


def test_no_history_records_nothing(cfg: Path) -> None:
    assert _eval(str(cfg), "--no-history") == 100
    state = cfg.parent / ".evalrun"
    assert not (state / "history.sqlite").exists()
    assert recording.last_run(state) is not None  # its results file still exists, pointed at by last-run.jsonl


def test_git_commit_is_recorded(cfg: Path) -> None:
    import subprocess

    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t.invalid"]
    try:
        subprocess.run(["git", "init", "-q", str(cfg.parent)], check=True)
        subprocess.run(git + ["-C", str(cfg.parent), "add", "evalrun.yaml"], check=True)
        subprocess.run(git + ["-C", str(cfg.parent), "commit", "-qm", "x"], check=True)
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("git is not available")
    assert _eval(str(cfg)) == 100
    commit = History(cfg.parent / ".evalrun").list()[0].git_commit
    head = subprocess.run(["git", "-C", str(cfg.parent), "rev-parse", "HEAD"], capture_output=True, text=True)
    assert commit is not None and head.stdout.startswith(commit.removesuffix("+dirty"))


def test_bad_references_are_usage_errors(cfg: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(UsageError, match="no run history"):
        History(cfg.parent / ".evalrun").list()
    assert _eval(str(cfg)) == 100
    history = History(cfg.parent / ".evalrun")
    with pytest.raises(UsageError, match="1 finished run"):
        history.resolve("latest~1")
    with pytest.raises(UsageError, match="not a run reference"):
        history.resolve("latest~x")
    with pytest.raises(UsageError, match="no run 'nope'"):
        history.resolve("nope")
    capsys.readouterr()
    assert main(["compare", "latest~1", "latest", "-c", str(cfg)]) == 2
    err = capsys.readouterr().err
    assert "1 finished run" in err and "Traceback" not in err


def test_resume_continues_the_pointed_run_and_updates_its_row(cfg: Path) -> None:
    assert _eval(str(cfg), "--filter-first-n", "1") == 0
    state = cfg.parent / ".evalrun"
    first = History(state).list()[0]
    assert first.summary is not None and first.summary["total"] == 1
    assert _eval(str(cfg), "--resume") == 100
    runs = History(state).list()
    assert len(runs) == 1 and runs[0].id == first.id and runs[0].status == "finished"
    assert runs[0].summary is not None and runs[0].summary["total"] == 2 and runs[0].summary["resumed"] == 1
    assert len(first.results_file.read_text().splitlines()) == 2


def test_a_second_writer_of_the_same_results_file_is_refused(tmp_path: Path) -> None:
    from evalrun.run.store import ResultsWriter

    pytest.importorskip("fcntl", reason="results-file locking uses fcntl (not on Windows)")
    path = tmp_path / "r.jsonl"
    first = ResultsWriter(path, append=False)
    first.write(b"{\"id\":\"a\"}\n")
    try:
        with pytest.raises(UsageError, match="is being written by another run"):
            ResultsWriter(path, append=False)
    finally:
        first.close()
    assert path.read_text() == '{"id":"a"}\n'  # the refused writer truncated nothing


def test_a_run_whose_process_is_gone_reads_as_died(tmp_path: Path) -> None:
    history = History(tmp_path)
    history.start("alive", description=None, config_files=[], options={}, results_file=tmp_path / "a.jsonl",
                  version="x")
    history.start("killed", description=None, config_files=[], options={}, results_file=tmp_path / "k.jsonl",
                  version="x")
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                          check=True).stdout.strip()  # a pid whose process has ended
    conn = sqlite3.connect(tmp_path / "history.sqlite")
    with conn:
        row = conn.execute("SELECT options FROM runs WHERE id='killed'").fetchone()
        options = json.loads(row[0])
        options["process"]["pid"] = int(dead)
        conn.execute("UPDATE runs SET options=? WHERE id='killed'", (json.dumps(options),))
    conn.close()
    status = {r.id: r.status for r in history.list()}
    assert status == {"alive": "running", "killed": "died"}
    assert history.resolve("latest").id == "killed"  # its cases are read like an interrupted run's
