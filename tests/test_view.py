"""`evalrun view`'s JSON endpoints (the page's data), what it refuses, and the command line."""

from __future__ import annotations

import json
import re
import socket
import time
from pathlib import Path

import pytest

from evalrun.cli import main
from evalrun.run.history import History
from evalrun.view import catalogue, index, server
from tests.viewserver import copy_folder, get, request, run_suite, serving, two_runs


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    """A folder with two recorded runs: A (baseline) and B (first prompt edited: one case newly failing)."""
    folder = tmp_path_factory.mktemp("view")
    a, b = two_runs(folder)
    return folder, a, b


@pytest.fixture
def folder(runs: tuple[Path, str, str], tmp_path: Path) -> Path:
    """A copy of the two runs' folder that a test may change."""
    copy_folder(runs[0], tmp_path / "suite")
    return tmp_path / "suite"


def test_runs_list_newest_first_with_the_history_fields(runs: tuple[Path, str, str]) -> None:
    folder, a, b = runs
    with serving(folder / ".evalrun") as srv:
        data = get(srv, "/api/runs")
    assert [r["id"] for r in data["runs"]] == [b, a]
    latest = data["runs"][0]
    assert latest["description"] == "edited prompt" and latest["status"] == "finished" and not latest["live"]
    assert (latest["total"], latest["passed"], latest["failed"], latest["errors"]) == (244, 242, 2, 0)
    assert latest["pass_rate"] == pytest.approx(100 * 242 / 244, abs=0.01)
    recorded = History(folder / ".evalrun").list()[0]  # as the run named its grader: builtin (offline, ...)
    assert latest["graders"] == recorded.graders and recorded.graders[0].startswith("builtin (")
    assert latest["duration_s"] >= 0
    assert latest["started_at"].endswith("Z") and latest["results_file"] == f".evalrun/runs/{b}.jsonl"
    assert "git_commit" in latest and latest["problem"] is None


def test_a_results_file_the_history_does_not_name_is_listed_and_read(folder: Path) -> None:
    c = run_suite(folder, "Note:", "unrecorded", "--no-history")
    with serving(folder / ".evalrun") as srv:
        runs = get(srv, "/api/runs")["runs"]
        row = next(r for r in runs if r["id"] == c)
        head = get(srv, f"/api/runs/{c}")
    assert row["status"] == "not in history" and (row["total"], row["failed"]) == (244, 1)
    assert row["duration_s"] is None and row["graders"] == ["builtin"]  # as its results name it
    assert head["summary"]["total"] == 244 and head["view"]["status"] == "not in history"
    assert runs[0]["id"] == c  # the newest file is listed first


def test_the_list_reads_a_big_file_in_the_background(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file the list must read (here one the history does not name) and that is big is read in the background:
    the list answers at once, saying so, and shows its figures once read."""
    monkeypatch.setattr(catalogue, "INLINE_BYTES", 0)
    c = run_suite(folder, "Note:", "unrecorded", "--no-history")
    with serving(folder / ".evalrun") as srv:
        first = next(r for r in get(srv, "/api/runs")["runs"] if r["id"] == c)
        deadline = time.monotonic() + 30
        while True:
            later = next(r for r in get(srv, "/api/runs")["runs"] if r["id"] == c)
            if not later["reading"] or time.monotonic() > deadline:
                break
            time.sleep(0.05)
    assert first["reading"] is True and first.get("total") is None
    assert later["reading"] is False and later["total"] == 244


def test_a_runs_page_is_the_reports_data(runs: tuple[Path, str, str], tmp_path: Path) -> None:
    """The view's run page carries the same summary, matrix and charts as the HTML report of that run."""
    folder, a, _ = runs
    assert main(["report", str(folder / ".evalrun" / "runs" / f"{a}.jsonl"), "-o", str(tmp_path / "r.html")]) == 0
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    start = html.index('type="application/json">') + len('type="application/json">')
    report = json.loads(html[start:html.index("</script>", start)])
    with serving(folder / ".evalrun") as srv:
        head = get(srv, f"/api/runs/{a}")
    assert head["kind"] == "run" and "cases" not in head
    for key in ("providers", "prompts_list", "matrix", "metrics", "case_svg", "status_svg"):
        assert head[key] == report[key], key
    assert head["prompts_list"] == ["Note: {{answer}}", "plain"] and head["matrix"][0] == [[122, 0, 0], [121, 1, 0]]
    assert head["summary"]["passed"] == 243 and head["summary"]["duration_s"] is not None
    assert head["meta"]["description"] == "baseline" and head["meta"]["run_id"] == a
    assert head["view"] == {"status": "finished", "live": False, "version": head["view"]["version"],
                            "git_commit": head["view"]["git_commit"], "options": head["view"]["options"],
                            "problems": {}, "calibration": {"agreement": [], "labels": None,
                                                            "threshold_sources": []}}


def test_cases_that_finished_out_of_order_are_listed_as_the_report_lists_them(
        folder: Path, runs: tuple[Path, str, str]) -> None:
    """The matrix lists providers and prompts in expansion order, whatever order the file has them in, and the
    rows' prompt numbers follow; also while the file grows."""
    baseline = folder / ".evalrun" / "runs" / f"{runs[1]}.jsonl"
    lines = sorted(baseline.read_bytes().splitlines(keepends=True), key=lambda line: json.loads(line)["index"])
    shuffled = folder / ".evalrun" / "runs" / "shuffled.jsonl"
    shuffled.write_bytes(lines[3] + lines[1])  # two cases of the second prompt finished first
    with serving(folder / ".evalrun") as srv:
        early = get(srv, "/api/runs/shuffled")
        with shuffled.open("ab") as f:
            f.write(b"".join(reversed(lines[4:])) + lines[2] + lines[0])
        head = get(srv, "/api/runs/shuffled")
        plain = get(srv, "/api/runs/shuffled/cases?pr=1")
    assert early["prompts_list"] == ["plain"]
    assert head["prompts_list"] == ["Note: {{answer}}", "plain"] and head["matrix"][0] == [[122, 0, 0], [121, 1, 0]]
    assert plain["matched"] == 122 and [it["row"][0] for it in plain["items"][:3]] == [1, 3, 5]


def test_cases_come_a_page_at_a_time_with_the_reports_filters(runs: tuple[Path, str, str]) -> None:
    folder, a, _ = runs
    with serving(folder / ".evalrun") as srv:
        base = f"/api/runs/{a}/cases"
        first, last = get(srv, base), get(srv, base + "?page=2")
        fails = get(srv, base + "?st=1")
        plain = get(srv, base + "?pr=1&q=V11")
        beyond = get(srv, base + "?page=99")
        eiffel = get(srv, base + "?q=eiffel")
        key = eiffel["items"][0]["key"]
        detail = get(srv, f"{base}/{key}")
        at = get(srv, f"{base}?at={first['items'][0]['key']}")
        target = get(srv, base + "?page=1")["items"][5]["key"]
        landed = get(srv, f"{base}?at={target}")
    assert (first["total"], first["matched"], first["pages"], len(first["items"])) == (244, 244, 3, 100)
    assert [it["row"][0] for it in first["items"]] == list(range(100))  # expansion order
    assert len(last["items"]) == 44 and last["page"] == 2 and beyond["page"] == 2
    [fail] = fails["items"]
    assert fails["matched"] == 1 and fail["row"][1] == "wants Note [answer=hello]" and fail["row"][4] == 1
    assert fail["row"][6] == "hello" and "Note" in fail["row"][7]  # output snippet and reason
    assert plain["matched"] == 11 and {it["row"][3] for it in plain["items"]} == {1}  # v11, v110..v119
    assert detail["prompt"] == "Note: The Eiffel Tower is in Paris. It was completed in 1889."
    assert [c["verdict"] for c in detail["assertions"][0]["claims"]] == ["supported", "supported"]
    assert detail["assertions"][0]["chunks"][0]["spans"]  # the supporting sentences to highlight
    assert at["page"] == 0 and landed["page"] == 1 and target in [it["key"] for it in landed["items"]]


def test_compare_reports_what_the_compare_command_does(runs: tuple[Path, str, str],
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    folder, a, b = runs
    capsys.readouterr()
    assert main(["compare", a, b, "--dir", str(folder)]) == 0
    printed = capsys.readouterr().out
    with serving(folder / ".evalrun") as srv:
        head = get(srv, f"/api/compare?a={a}&b={b}")
        cases = get(srv, f"/api/compare/cases?a={a}&b={b}")
        regressions = get(srv, f"/api/compare/cases?a={a}&b={b}&st=regression")
        detail = get(srv, f"/api/compare/cases/{cases['items'][0]['key']}?a={a}&b={b}")
        run_a = get(srv, f"/api/runs/{a}/cases/{detail['id_a']}")
        run_b = get(srv, f"/api/runs/{b}/cases/{detail['id_b']}")
        status, _, missing = request(srv, f"/api/compare?a={a}")
    assert head["kind"] == "diff" and head["text"].strip() == printed.strip()
    assert head["summary"]["newly_failing"] == 1 and head["summary"]["regressions"] == 1
    assert head["runs"] == {"a": a, "b": b} and head["matrix"][0][0]["prompt_text_changed"]
    assert cases["total"] == 1 and regressions["matched"] == 1
    assert cases["items"][0]["row"][3] == "newly_failing"
    assert detail["output_a"] == "Note: hello" and detail["output_b"] == "Answer: hello"
    assert run_a["output"] == "Note: hello" and run_b["output"] == "Answer: hello"  # each side's case id, for links
    assert status == 400 and "two runs" in missing["error"]


def test_a_missing_results_file_is_a_clear_answer_not_a_crash(folder: Path) -> None:
    runs = sorted((folder / ".evalrun" / "runs").glob("*.jsonl"))
    runs[0].unlink()
    with serving(folder / ".evalrun") as srv:
        status, _, body = request(srv, f"/api/runs/{runs[0].stem}")
        listing = get(srv, "/api/runs")["runs"]
        cmp_status, _, cmp_body = request(srv, f"/api/compare?a={runs[0].stem}&b={runs[1].stem}")
        unknown = request(srv, "/api/runs/no-such-run")
    assert status == 404 and body["kind"] == "missing" and str(runs[0]) in body["error"] and body["hint"]
    assert next(r for r in listing if r["id"] == runs[0].stem)["problem"] == "results file missing"
    assert cmp_status == 404 and cmp_body["kind"] == "missing"
    assert unknown[0] == 404 and unknown[2]["kind"] == "not_found"


def test_a_corrupt_results_file_is_named_with_its_line(folder: Path) -> None:
    runs = sorted((folder / ".evalrun" / "runs").glob("*.jsonl"))
    runs[0].write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00binary\n")
    lines = runs[1].read_bytes().splitlines(keepends=True)
    runs[1].write_bytes(b"".join(lines[:3]) + b"{not json\n" + b"".join(lines[3:]) + b'{"id": 1}\n')
    with serving(folder / ".evalrun") as srv:
        status, _, body = request(srv, f"/api/runs/{runs[0].stem}")
        listing = {r["id"]: r for r in get(srv, "/api/runs")["runs"]}
        partly = get(srv, f"/api/runs/{runs[1].stem}")
    assert status == 422 and body["kind"] == "corrupt" and "line 1 is not a JSON result record" in body["error"]
    assert listing[runs[0].stem]["problem"] == "not a results file"
    assert partly["view"]["problems"] == {"bad_lines": 2, "first_bad_lines": [4, len(lines) + 2]}
    assert partly["summary"]["total"] == 244  # the good lines are all there


def _lines(folder: Path) -> list[bytes]:
    return sorted((folder / ".evalrun" / "runs").glob("*.jsonl"))[0].read_bytes().splitlines(keepends=True)


def test_a_run_in_progress_grows_as_its_results_file_does(folder: Path) -> None:
    lines = _lines(folder)
    state = folder / ".evalrun"
    results = state / "runs" / "20300101-000000-live00.jsonl"
    History(state).start("20300101-000000-live00", description="live", config_files=[str(folder / "evalrun.yaml")],
                         options={}, results_file=results, version="test")
    results.write_bytes(b"".join(lines[:2]))
    with serving(state) as srv:
        base = "/api/runs/20300101-000000-live00"
        before = get(srv, base)
        assert get(srv, "/api/runs")["runs"][0]["live"] is True
        with results.open("ab") as f:
            f.write(lines[2] + lines[3][:40])  # a case, and half of the next one (still being written)
        grown = get(srv, base)
        assert grown["summary"]["total"] == 3 and grown["view"]["problems"] == {}
        with results.open("ab") as f:
            f.write(lines[3][40:] + lines[1])  # the rest of it, and a case written again (a resumed run)
        again = get(srv, base)
        page = get(srv, base + "/cases")
        History(state).finish("20300101-000000-live00", status="finished", summary=again["summary"], graders=[])
        done = get(srv, base)
    assert before["view"]["live"] and before["view"]["status"] == "running" and before["summary"]["total"] == 2
    assert grown["view"]["version"] > before["view"]["version"]
    written = sorted(json.loads(line)["index"] for line in lines[:4])  # cases are written as they finish
    assert again["summary"]["total"] == 4 and [it["row"][0] for it in page["items"]] == written
    assert done["view"] == {**done["view"], "status": "finished", "live": False}


def test_only_get_from_the_address_served(runs: tuple[Path, str, str]) -> None:
    folder = runs[0]
    with serving(folder / ".evalrun") as srv:
        page = request(srv, "/")
        posted = request(srv, "/api/runs", method="POST")
        deleted = request(srv, f"/api/runs/{runs[1]}", method="DELETE")
        rebound = request(srv, "/api/runs", headers={"Host": "evil.example:80"})
        bad = request(srv, f"/api/runs/{runs[1]}/cases?pv=x")
        nowhere = request(srv, "/api/nothing")
        js = request(srv, "/assets/report.js")
    status, headers, body = page
    assert status == 200 and '<script src="/assets/report.js">' in body
    assert "default-src 'none'" in headers["content-security-policy"] and headers["cache-control"] == "no-store"
    assert "connect-src 'self'" in headers["content-security-policy"]
    assert not re.search(r"https?://", body + js[2])  # nothing is loaded from elsewhere
    assert posted[0] == 405 and posted[1]["allow"] == "GET, HEAD" and deleted[0] == 405
    assert rebound[0] == 403 and bad[0] == 400 and bad[2]["kind"] == "bad_request"
    assert nowhere[0] == 404 and js[0] == 200 and "function mount" in js[2]


def test_the_page_and_the_server_filter_by_the_same_statuses() -> None:
    """report.js and view/index.py list the statuses in the same order (the <select> sends their index)."""
    from importlib import resources

    js = resources.files("evalrun.report").joinpath("report.js").read_text(encoding="utf-8")

    def js_list(name: str) -> tuple[str, ...]:
        found = re.search(rf"const {name}=\[([^\]]*)\]", js)
        assert found, name
        return tuple(s.strip("'") for s in found.group(1).split(","))
    assert js_list("RUN_STATUS") == index.RUN_STATUS and js_list("DIFF_STATUS") == index.DIFF_STATUS
    assert int(re.search(r"const PAGE=(\d+)", js).group(1)) == index.PAGE  # type: ignore[union-attr]


def test_a_taken_default_port_is_replaced_by_a_free_one(runs: tuple[Path, str, str],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from evalrun.errors import UsageError

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        monkeypatch.setattr(server, "DEFAULT_PORT", port)
        srv, note = server.start(runs[0] / ".evalrun")
        srv.server_close()
        assert srv.server_address[1] != port and f"port {port} is in use" in note
        with pytest.raises(UsageError, match=f"cannot listen on 127.0.0.1:{port}"):
            server.start(runs[0] / ".evalrun", port=port)


def test_the_command_names_a_folder_without_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["view", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert f"no runs in {str(tmp_path)!r}: it has no .evalrun folder" in err and "evalrun eval" in err
    assert main(["view", str(tmp_path / "nope")]) == 2
    assert "no folder" in capsys.readouterr().err
    assert main(["view", str(tmp_path), "--port", "70000"]) == 2
    assert "--port 70000 is not a port" in capsys.readouterr().err


def test_the_command_serves_until_interrupted(runs: tuple[Path, str, str]) -> None:
    """`evalrun view DIR --port 0` prints its address, answers there, and stops cleanly on Ctrl-C."""
    import os
    import signal
    import subprocess
    import sys
    import urllib.request

    root = Path(__file__).resolve().parent.parent
    proc = subprocess.Popen([sys.executable, "-m", "evalrun", "view", str(runs[0] / "evalrun.yaml"), "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(root)})
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        url = re.search(r"http://127\.0\.0\.1:\d+/", line)
        assert url and f"the runs in {runs[0] / '.evalrun'}" in line and "read-only" in line, line
        with urllib.request.urlopen(url.group(0) + "api/runs", timeout=30) as resp:
            assert [r["id"] for r in json.load(resp)["runs"]] == [runs[2], runs[1]]
        proc.send_signal(signal.SIGINT)
        assert proc.wait(30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_a_file_not_in_history_shows_its_config_and_description_and_runs_group_by_config(folder: Path) -> None:
    """issue 37: another config's `--no-history` runs in the same folder were listed as NOT IN HISTORY with no
    description, some marked live; the file's own record names its config and description and that it ended."""
    (folder / "other.yaml").write_text("description: the other suite\nprompts: ['{{q}}']\nproviders: [echo]\n"
                                       "tests: [{vars: {q: hi}, assert: [{type: equals, value: hi}]}]\n")
    assert main(["eval", str(folder / "other.yaml"), "--no-progress-bar", "--no-table", "--no-history"]) == 0
    other = max((folder / ".evalrun" / "runs").glob("*.jsonl"), key=lambda p: p.stat().st_mtime).stem
    assert (folder / ".evalrun" / "runs" / f"{other}.run.json").is_file()
    with serving(folder / ".evalrun") as srv:
        rows = {r["id"]: r for r in get(srv, "/api/runs")["runs"]}
        head = get(srv, f"/api/runs/{other}")
    row = rows[other]
    assert row["status"] == "not in history" and not row["live"]  # it ended: its own record says so
    assert row["description"] == "the other suite" and row["config"] == "other.yaml"
    assert (row["total"], row["passed"]) == (1, 1)
    assert {r["config"] for i, r in rows.items() if i != other} == {"evalrun.yaml"}  # the recorded runs' config
    assert head["view"]["status"] == "not in history"
    assert json.dumps(head).count("the other suite") >= 1 and "other.yaml" in json.dumps(head)


def test_the_page_filters_runs_by_config() -> None:
    js = (Path(server.__file__).parent / "view.js").read_text()
    assert 'id="runs-cfg"' in js and "r.config" in js
