"""`eval --workers N`: the cases spread over forked processes give exactly the one-process run (records, summary,
exit code); a worker that dies turns only its undelivered cases into errors; interrupting keeps every finished case."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from evalrun.cli import main
from tests.fakeserver import FakeOpenAI
from tests.graderfakes import route
from tests.test_split import CONFIG, _no_latency, _records

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="--workers needs fork")

SUMMARY_KEYS = ("passed", "failed", "errors", "total", "pass_rate", "metrics", "derived_metrics", "tokens", "cost",
                "graders", "interrupted")


def _run(cfg: Path, name: str, *extra: str) -> int:
    return main(["eval", str(cfg), "--no-progress-bar", "--no-table", "--no-cache", "--results-file",
                 str(cfg.parent / f"{name}.jsonl"), "-o", str(cfg.parent / f"{name}.json"), *extra])


def _summary(cfg: Path, name: str) -> dict[str, Any]:
    out: dict[str, Any] = json.loads((cfg.parent / f"{name}.json").read_text())["summary"]
    return {k: out.get(k) for k in SUMMARY_KEYS}


def _report_results(cfg: Path, name: str) -> list[Any]:
    return [_no_latency(r) for r in json.loads((cfg.parent / f"{name}.json").read_text())["results"]]


def _same_as_one_process(cfg: Path, *extra: str, workers: tuple[int, ...] = (2, 3)) -> dict[int, dict[str, Any]]:
    code = _run(cfg, "one", *extra)
    one = _records(cfg.parent / "one.jsonl")
    for n in workers:
        assert _run(cfg, f"w{n}", "--workers", str(n), *extra) == code
        assert _records(cfg.parent / f"w{n}.jsonl") == one, n
        assert _summary(cfg, f"w{n}") == _summary(cfg, "one"), n
        assert _report_results(cfg, f"w{n}") == _report_results(cfg, "one"), n  # -o reports read the merged file
        lines = (cfg.parent / f"w{n}.jsonl").read_text().splitlines()
        assert len(lines) == len(one)  # each case once
    return one


@pytest.mark.parametrize("repeat", ["1", "2"])
def test_select_best_groups_and_grader_calls_as_in_one_process(tmp_path: Path, repeat: str,
                                                               fake_openai: FakeOpenAI) -> None:
    route(fake_openai, judge={"best": 2, "reason": "the third output"})  # a split group would pick differently
    cfg = tmp_path / "c.yaml"
    cfg.write_text(CONFIG.replace("URL", fake_openai.url))
    one = _same_as_one_process(cfg, "--repeat", repeat, workers=(2, 3, 4))
    assert len(one) == 24 * int(repeat)
    assert sum(1 for r in one.values() if r["test_index"] == 0 and r["assertions"][0]["pass"]) == 3 * int(repeat)


def _jsonl_suite(tmp_path: Path, rows: int) -> Path:
    lines = []
    for i in range(rows):
        row: dict[str, Any] = {"vars": {"q": f"question {i}"}, "assert": [{"type": "contains", "value": "question"}]}
        if i % 7 == 0:
            row["vars"]["q"] = [f"a{i}", f"b{i}", f"question {i}"]  # expands to 3 cases
            row["assert"] = [{"type": "contains", "value": "question"}, {"type": "javascript",
                                                                           "value": "output.length > 3"}]
        if i % 11 == 0:
            row["description"] = f"row {i}"
            row["assert"] = [{"type": "icontains", "value": "QUESTION", "metric": "found"}]
        lines.append(json.dumps(row))
    lines.insert(5, "")  # a blank line is no row
    (tmp_path / "tests.jsonl").write_text("\n".join(lines) + "\n")
    (tmp_path / "more.jsonl").write_text(json.dumps({"vars": {"q": "last question"}}) + "\n")
    cfg = tmp_path / "c.yaml"
    cfg.write_text("providers: [echo]\nprompts: ['Say {{q}}', 'Repeat {{q}}']\n"
                   "defaultTest: {assert: [{type: regex, value: '\\w+'}]}\n"
                   "derivedMetrics: [{name: twice, value: 'found * 2'}]\n"
                   "tests:\n  - vars: {q: inline question}\n  - file://tests.jsonl\n"
                   "  - vars: {q: [x, y]}\n  - file://more.jsonl\n")
    return cfg


def test_streamed_rows_expansion_and_file_boundaries(tmp_path: Path) -> None:
    cfg = _jsonl_suite(tmp_path, 60)
    one = _same_as_one_process(cfg, workers=(2, 3, 5))
    assert len(one) == 2 * (1 + 60 + 9 * 2 + 2 + 1)
    assert {r["status"] for r in one.values()} == {"pass", "fail"}


def test_a_large_yaml_tests_file_streamed_in_windows(tmp_path: Path) -> None:
    size = 1 << 20
    rows = [f"- vars: {{q: 'question {i} {'x' * 90}'}}\n  assert: [{{type: contains, value: 'question {i} '}}]\n"
            for i in range(size // 120)]
    (tmp_path / "tests.yaml").write_text("".join(rows))
    assert (tmp_path / "tests.yaml").stat().st_size > size
    cfg = tmp_path / "c.yaml"
    cfg.write_text("providers: [echo]\nprompts: ['{{q}}']\ntests:\n  - file://tests.yaml\n"
                   "  - vars: {q: after}\n    assert: [{type: equals, value: after}]\n")
    one = _same_as_one_process(cfg, workers=(2,))
    assert len(one) == len(rows) + 1 and {r["status"] for r in one.values()} == {"pass"}


def test_filter_first_n_and_repeat(tmp_path: Path) -> None:
    cfg = _jsonl_suite(tmp_path, 30)
    one = _same_as_one_process(cfg, "--filter-first-n", "41", workers=(2, 3))
    assert sorted(one) == list(range(41))
    _same_as_one_process(cfg, "--repeat", "2", workers=(3,))


def test_runs_that_stay_in_one_process_say_why(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = _jsonl_suite(tmp_path, 10)
    _same_as_one_process(cfg, "--shard", "1/2", workers=(2,))
    assert "--workers 2: --shard selects over the whole expansion; running in one process" in capsys.readouterr().err
    _same_as_one_process(cfg, "--filter-pattern", "row", workers=(2,))
    assert "running in one process" in capsys.readouterr().err


@pytest.mark.parametrize("value", ["0", "-1", "lots", "257"])
def test_a_bad_worker_count_is_a_usage_error(tmp_path: Path, value: str,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    cfg = _jsonl_suite(tmp_path, 3)
    assert _run(cfg, "x", "--workers", value) == 2
    err = capsys.readouterr().err
    assert f"--workers {value!r} is not a number of processes between 1 and 256" in err and "Traceback" not in err


def test_a_worker_that_dies_errors_only_the_cases_it_did_not_deliver(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "prov.py").write_text("import os, signal\ndef call_api(prompt, options, context):\n"
                                      "    if prompt == 'boom':\n        os.kill(os.getpid(), signal.SIGKILL)\n"
                                      "    return prompt\n")
    values = [f"v{i}" for i in range(20)]
    values[15] = "boom"
    cfg = tmp_path / "c.yaml"
    cfg.write_text("providers: [file://prov.py]\nprompts: ['{{q}}']\ntests:\n"
                   + "".join(f"  - vars: {{q: {v}}}\n    assert: [{{type: contains, value: v}}]\n" for v in values))
    assert _run(cfg, "w", "--workers", "2", "-j", "1") == 100
    recs = _records(tmp_path / "w.jsonl")
    assert sorted(recs) == list(range(20))  # nothing lost
    assert all(recs[i]["status"] == "pass" for i in range(10))  # the other worker's window is untouched
    assert recs[15]["status"] == "error"
    assert "the worker process running this case failed: killed by SIGKILL" in recs[15]["error"]
    assert all(recs[i]["status"] in ("pass", "error") for i in range(10, 20))
    summary = _summary(cfg, "w")
    assert summary["total"] == 20 and summary["errors"] >= 1 and summary["passed"] + summary["errors"] == 20
    assert "worker 2/2 failed: killed by SIGKILL" in capsys.readouterr().err


def _env() -> dict[str, str]:
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    env.pop("CI", None)
    return env


def test_ctrl_c_stops_every_worker_keeps_finished_cases_and_resume_completes(tmp_path: Path) -> None:
    (tmp_path / "prov.py").write_text("import time\ndef call_api(prompt, options, context):\n"
                                      "    time.sleep(0.05)\n    return prompt\n")
    values = ", ".join(f"v{i}" for i in range(200))
    cfg = tmp_path / "evalrun.yaml"
    cfg.write_text("providers: [file://prov.py]\nprompts: ['{{q}}']\ntests:\n"
                   + "".join(f"  - vars: {{q: [{values}]}}\n" for _ in range(2)))
    cmd = [sys.executable, "-m", "evalrun", "eval", str(cfg), "--no-table", "--no-progress-bar", "-j", "2",
           "--workers", "2", "--results-file", str(tmp_path / "r.jsonl"), "-o", str(tmp_path / "r.json")]
    proc = subprocess.Popen(cmd, cwd=tmp_path, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while True:  # until both workers have written results (however slow the machine)
        spools = list(tmp_path.glob(".evalrun-workers-*/[01]/part.jsonl"))
        if len(spools) == 2 and all(p.stat().st_size for p in spools):
            break
        assert proc.poll() is None and time.monotonic() < deadline, "the workers wrote no result within 120 s"
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err.decode()
    assert b"Traceback" not in err
    done = _records(tmp_path / "r.jsonl")
    summary = json.loads((tmp_path / "r.json").read_text())["summary"]
    assert summary["interrupted"] is True and 0 < summary["total"] == len(done) < 400
    assert {r["status"] for r in done.values()} == {"pass"}
    assert {r["test_index"] for r in done.values()} == {0, 1}  # both workers ran, both stopped
    assert not list(tmp_path.glob(".evalrun-workers-*"))  # spools removed
    resumed = subprocess.run([*cmd[:-4], "--resume", str(tmp_path / "r.jsonl")], cwd=tmp_path, env=_env(),
                             capture_output=True, timeout=120)
    assert resumed.returncode == 0, resumed.stderr.decode()
    assert b"--resume continues a run in one process" in resumed.stderr
    assert sorted(_records(tmp_path / "r.jsonl")) == list(range(400))


def test_workers_that_cannot_start_stop_the_run_before_any_case(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    cfg = _jsonl_suite(tmp_path, 10)
    real, started = os.fork, []

    def fork() -> int:
        if started:
            raise BlockingIOError(11, "Resource temporarily unavailable")
        pid = real()
        if pid == 0:
            time.sleep(30)  # a worker that would run; the driver must stop it
            os._exit(0)
        started.append(pid)
        return pid

    monkeypatch.setattr(os, "fork", fork)
    t0 = time.monotonic()
    assert _run(cfg, "x", "--workers", "3") == 2
    assert time.monotonic() - t0 < 20  # the started worker was killed, not waited for
    err = capsys.readouterr().err
    assert "cannot start worker process 2 of 3: Resource temporarily unavailable" in err
    with pytest.raises(ProcessLookupError):
        os.kill(started[0], 0)
