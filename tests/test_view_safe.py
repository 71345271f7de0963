"""Issue 36, `evalrun view`, `runs` and `compare --dir`: history is read without writing (no -wal/-shm, the file
unchanged), on a read-only folder too; an unreadable history is a one-line error naming it; a forged row is a clear
answer, escaped in the page (headless Chromium); the Host allow-list holds on 0.0.0.0; bad query values are 400."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import socket
import sqlite3
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest

from evalrun.cli import main
from evalrun.view import server
from tests import browser
from tests.viewserver import copy_folder, request, serving, two_runs


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    folder = tmp_path_factory.mktemp("viewsafe")
    a, b = two_runs(folder)
    return folder, a, b


@pytest.fixture
def folder(runs: tuple[Path, str, str], tmp_path: Path) -> Path:
    copy_folder(runs[0], tmp_path / "suite")
    return tmp_path / "suite"


def _read_everything(state: Path, b: str) -> None:
    with contextlib.redirect_stdout(io.StringIO()) as out:
        assert main(["runs", "--dir", str(state)]) == 0
        assert main(["compare", "latest~1", "latest", "--dir", str(state)]) == 0
    assert b in out.getvalue()
    with serving(state) as srv:
        listed = request(srv, "/api/runs")
        page = request(srv, f"/api/runs/{b}")
    assert listed[0] == 200 and b in {r["id"] for r in listed[2]["runs"]} and page[0] == 200


def _snapshot(state: Path) -> tuple[list[str], bytes, int, int]:
    """The folder's files, the database's bytes and mtime, and the folder's mtime (a -wal made then deleted moves
    it)."""
    db = state / "history.sqlite"
    return sorted(p.name for p in state.iterdir()), db.read_bytes(), db.stat().st_mtime_ns, state.stat().st_mtime_ns


def test_runs_compare_and_view_write_nothing(folder: Path, runs: tuple[Path, str, str]) -> None:
    state = folder / ".evalrun"
    before = _snapshot(state)
    assert not [n for n in before[0] if n.endswith(("-wal", "-shm"))]
    time.sleep(0.01)
    _read_everything(state, runs[2])
    assert _snapshot(state) == before  # no -wal / -shm made (nor made and deleted), the database unchanged


def test_a_read_only_folder_is_read(folder: Path, runs: tuple[Path, str, str]) -> None:
    """As root (CI), in a process without capabilities: root's CAP_DAC_OVERRIDE writes through any mode."""
    state = folder / ".evalrun"
    os.chmod(state / "history.sqlite", stat.S_IRUSR)
    os.chmod(state, stat.S_IRUSR | stat.S_IXUSR)
    try:
        if os.geteuid() != 0:
            _read_everything(state, runs[2])
            return
        setpriv = shutil.which("setpriv")  # util-linux
        if setpriv is None:
            pytest.skip("root writes through a read-only mode, and no setpriv to drop that right")
        code = ("import sys; from pathlib import Path; from tests.test_view_safe import _read_everything, _unwritable;"
                " _unwritable(Path(sys.argv[1])); _read_everything(Path(sys.argv[1]), sys.argv[2])")
        done = subprocess.run([setpriv, "--bounding-set", "-all", "--inh-caps", "-all", sys.executable, "-c", code,
                               str(state), runs[2]], cwd=Path(__file__).parents[1], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
    finally:
        os.chmod(state, stat.S_IRWXU)
        os.chmod(state / "history.sqlite", stat.S_IRUSR | stat.S_IWUSR)
    assert not [p.name for p in state.iterdir() if p.name.endswith(("-wal", "-shm"))]


def _unwritable(state: Path) -> None:
    """This process cannot write in `state` (so what follows reads a truly read-only folder)."""
    with pytest.raises(PermissionError):
        (state / "probe").touch()


def test_an_unreadable_history_is_one_line_naming_it(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state = folder / ".evalrun"
    (state / "history.sqlite").write_bytes(b"this is not a database" * 100)
    assert main(["runs", "--dir", str(state)]) == 2
    assert main(["compare", "--dir", str(state)]) == 2
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 4 and "Traceback" not in err  # each: the message and its hint
    assert all("history.sqlite" in line for line in lines[::2])
    with serving(state) as srv:
        status, _, body = request(srv, "/api/runs")
    assert status == 500 and "history.sqlite" in body["error"] and body["kind"] == "unreadable"


def _forge(state: Path, run_id: str) -> None:
    """A history row as a shared or forged history.sqlite may hold one: markup where counts are."""
    conn = sqlite3.connect(state / "history.sqlite")
    seq, *_ = conn.execute("SELECT seq FROM runs ORDER BY seq DESC").fetchone()
    summary = {"passed": '<a id="phish" href="https://evil.example/">log in again</a>',
               "failed": "<style>body{display:none}</style>", "errors": "<img src=x onerror=alert(1)>",
               "total": 3, "pass_rate": 50}
    conn.execute("INSERT INTO runs (id, status, started_at, finished_at, description, config_files, config_digest,"
                 " options, summary, results_file, graders) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                 (run_id, "finished", "2030-01-01T00:00:00Z", "2030-01-01T00:00:01Z", "forged <b>row</b>", "[]",
                  "x", "{}", json.dumps(summary), "runs/nowhere.jsonl", "[]"))
    conn.commit()
    conn.close()


def test_a_forged_row_is_a_clear_answer(folder: Path) -> None:
    state = folder / ".evalrun"
    _forge(state, "forged-run")
    with serving(state) as srv:
        listed = request(srv, "/api/runs")
        page = request(srv, "/api/runs/forged-run")
    row = next(r for r in listed[2]["runs"] if r["id"] == "forged-run")
    assert row["status"] == "bad row" and "passed" not in row
    assert page[0] == 422 and "summary.passed" in page[2]["error"] and page[2]["kind"] == "corrupt"


@browser.needs_chromium
def test_a_forged_row_stays_text_in_the_browser(folder: Path, tmp_path: Path) -> None:
    state = folder / ".evalrun"
    _forge(state, "forged-run")
    with browser.Browser.launch() as chrome, serving(state) as srv:
        page = chrome.open(srv.url)
        deadline = time.monotonic() + 20
        while not page.eval("!!document.querySelector('#runs-rows tr.run[data-id=\"forged-run\"]')"):
            assert time.monotonic() < deadline
            time.sleep(0.1)
        assert page.eval("document.querySelectorAll('#phish, #runs-rows style, #runs-rows img').length") == 0
        assert page.eval("getComputedStyle(document.body).display") != "none"
        page.eval("location.hash = '#/run/forged-run'")
        deadline = time.monotonic() + 20
        while not page.eval("!!document.getElementById('problem')"):
            assert time.monotonic() < deadline
            time.sleep(0.1)
        shown = page.eval("document.getElementById('problem').textContent")
        assert "forged-run" in shown and "malformed" in shown
        assert [e for e in page.errors if "422" not in e] == []


@pytest.fixture(params=["0.0.0.0", "::"])
def wide(runs: tuple[Path, str, str], request: pytest.FixtureRequest) -> Iterator[server.ViewServer]:
    if request.param == "::" and not socket.has_ipv6:
        pytest.skip("no IPv6 on this machine")
    with serving(runs[0] / ".evalrun", request.param, ("evalrun.internal",)) as srv:
        yield srv


def test_the_host_allow_list_holds_on_every_address(wide: server.ViewServer) -> None:
    port = wide.server_address[1]

    def status(host: str) -> int:
        return request(wide, "/api/runs", headers={"Host": host})[0]

    assert status(f"rebind.evil.example:{port}") == 403 and status("evil.example") == 403
    assert status(f"127.0.0.1:{port}") == 200 and status(f"localhost:{port}") == 200
    assert status(f"evalrun.internal:{port}") == 200  # --allow-host
    assert status(f"10.1.2.3:{port}") == 200  # an address typed in a browser: no rebinding through it
    assert status("127.0.0.1:1") == 403  # another port: not this server


@pytest.mark.parametrize("query", [quote("page=²", safe="="), "page=" + "9" * 5000, quote("pv=١", safe="="),
                                   quote("st=²", safe="="), "pr=-1", "q=" + "x" * 5000])
def test_bad_query_values_are_400(runs: tuple[Path, str, str], query: str) -> None:
    with serving(runs[0] / ".evalrun") as srv:
        status, _, body = request(srv, f"/api/runs/{runs[2]}/cases?{query}")
        bad_case = request(srv, f"/api/compare/cases/{quote('²')}?a={runs[1]}&b={runs[2]}")
    assert status == 400 and body["kind"] == "bad_request" and len(body["error"]) < 200
    assert bad_case[0] == 400


def test_runs_prints_no_escape_sequence_from_a_row(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state = folder / ".evalrun"
    conn = sqlite3.connect(state / "history.sqlite")
    conn.execute("UPDATE runs SET description = ? WHERE seq = (SELECT MAX(seq) FROM runs)",
                 ("\x1b]0;owned\x07\x1b[2Jcleared",))
    conn.commit()
    conn.close()
    assert main(["runs", "--dir", str(state)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out and "cleared" in out
