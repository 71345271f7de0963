"""`--executor ray` without Ray: usage errors, no `ray` import otherwise; the shard task and the driver's
intake (run/split.py), which need no Ray to run (test_ray_executor.py runs them on a local Ray instance)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from evalrun import config
from evalrun.cli import main
from evalrun.run.options import RunOptions
from evalrun.run.progress import Progress
from evalrun.run.split import Intake
from evalrun.run.workers import ShardJob, resolve, run_shard, shard_cases

CONFIG = """providers: [echo]
prompts: ['{{q}}']
tests:
  - vars: {q: [a, b, c, d, e, f, g]}
    assert: [{type: contains, value: a}]
"""


def test_without_ray_the_executor_is_a_usage_error_naming_the_extra(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "c.yaml").write_text(CONFIG)
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError, installed or not
    assert main(["eval", str(tmp_path / "c.yaml"), "--executor", "ray"]) == 2
    err = capsys.readouterr().err
    assert "pip install 'evalrun-llm[ray]'" in err and "Traceback" not in err


@pytest.mark.parametrize(("extra", "says"), [
    (["--ray-tasks", "3"], "need --executor ray"),
    (["--ray-address", "127.0.0.1:6379"], "need --executor ray"),
    (["--executor", "ray", "--shard", "1/2"], "do not combine"),
    (["--executor", "ray", "--ray-tasks", "0"], "out of range"),
])
def test_ray_options_that_do_not_fit_are_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                      extra: list[str], says: str) -> None:
    (tmp_path / "c.yaml").write_text(CONFIG)
    assert main(["eval", str(tmp_path / "c.yaml"), *extra]) == 2
    assert says in capsys.readouterr().err


def test_ray_is_never_imported_otherwise(tmp_path: Path) -> None:
    (tmp_path / "c.yaml").write_text(CONFIG)
    code = ("import sys; from evalrun.cli import main; import evalrun.run.workers; "
            f"main(['eval', {str(tmp_path / 'c.yaml')!r}, '--no-table', '--no-cache', '--executor', 'local', "
            f"'--results-file', {str(tmp_path / 'r.jsonl')!r}]); "
            "print('ray' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip().splitlines()[-1] == "False", out.stderr


def _job(tmp_path: Path, k: int, n: int) -> ShardJob:
    return ShardJob(configs=(str(tmp_path / "c.yaml"),), driver_cwd=str(tmp_path), shard=(k, n),
                    options=RunOptions(use_cache=False), batch_s=0.05)


def test_a_shard_task_streams_its_cases_and_skips_those_the_driver_holds(tmp_path: Path) -> None:
    (tmp_path / "c.yaml").write_text(CONFIG)
    got = [json.loads(line) for batch in run_shard(_job(tmp_path, 2, 3)) for line in batch]
    assert sorted(r["index"] for r in got) == [2, 3]  # positions 7/3 to 14/3 of 7: shard 2 of 3
    assert {r["vars"]["q"] for r in got} == {"c", "d"}
    assert all(r["status"] == "fail" for r in got)
    again = [json.loads(line) for batch in run_shard(_job(tmp_path, 2, 3), bytes([0, 0, 0, 1])) for line in batch]
    assert [r["index"] for r in again] == [2]
    assert not list(tmp_path.glob(".evalrun/last-run*"))  # a task never moves the user's last-run pointer


def test_shard_cases_compose_with_filters_as_eval_shard_does(tmp_path: Path) -> None:
    (tmp_path / "c.yaml").write_text(CONFIG)
    suite = config.load([str(tmp_path / "c.yaml")])
    job = ShardJob(configs=(), driver_cwd=str(tmp_path), shard=(1, 2), options=RunOptions(filter_first_n=5),
                   failing=frozenset(c.id for c in shard_cases(suite, _job(tmp_path, 1, 1)) if c.index != 2))
    assert [c.index for c in shard_cases(suite, job)] == [0, 3, 5]  # failing: all but 2; first 5; every 2nd
    assert [c.index for c in shard_cases(suite, job, bytes([0, 0, 0, 1]))] == [0, 5]


def _intake(tmp_path: Path, suite: Any) -> Intake:
    return Intake(suite, RunOptions(results_file=tmp_path / "r.jsonl"), Progress(None, enabled=False))


def test_intake_keeps_each_case_once(tmp_path: Path) -> None:
    (tmp_path / "c.yaml").write_text(CONFIG)
    c = _intake(tmp_path, config.load([str(tmp_path / "c.yaml")]))
    for line in (b'{"id":"a","index":0,"status":"pass"}\n', b'{"id":"c","index":2,"status":"fail"}\n',
                 b'{"id":"c","index":2,"status":"fail"}\n', b'{"id":"z","index":5000,"status":"pass"}\n',
                 b'{"id":"b","index":1,"status":"error"}\n'):
        c.take(line)
    c.close("finished")
    assert [json.loads(x)["id"] for x in (tmp_path / "r.jsonl").read_text().splitlines()] == ["a", "c", "z", "b"]
    assert c.progress.done == 4 and c.progress.errors == 1
    assert [i for i, v in enumerate(c.delivered()) if v] == [0, 1, 2, 5000]  # what a retried task skips
    assert [r["id"] for r in c.outcome("finished").iter_results()] == ["a", "b", "c", "z"]  # expansion order


def test_intake_fills_errors_for_undelivered_cases(tmp_path: Path) -> None:
    (tmp_path / "c.yaml").write_text(CONFIG)
    suite = config.load([str(tmp_path / "c.yaml")])
    c = _intake(tmp_path, suite)
    c.take(b"{\"id\":\"x\",\"index\":0,\"status\":\"pass\"}\n")
    c.fail("shard 1/2", "Ray task", "lost", shard_cases(suite, _job(tmp_path, 1, 2)))
    c.close("finished")
    recs = [json.loads(x) for x in (tmp_path / "r.jsonl").read_text().splitlines()]
    assert [r["index"] for r in recs] == [0, 1, 2]
    assert all(r["status"] == "error" and r["error"] == "the Ray task running this case failed: lost"
               for r in recs[1:])
    assert recs[1]["prompt_sha"] and recs[1]["prompt_index"] == 0
    assert c.tally.errors == 2 and c.failed == {"shard 1/2": "lost"}


def test_config_paths_are_found_on_the_worker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "c.yaml").write_text(CONFIG)
    assert resolve(str(tmp_path / "sub" / "c.yaml"), "/elsewhere") == str(tmp_path / "sub" / "c.yaml")
    monkeypatch.chdir(tmp_path)  # as under `ray job submit --working-dir`: the same tree at another place
    assert resolve("/driver/home/sub/c.yaml", "/driver/home") == str(tmp_path / "sub" / "c.yaml")
    assert resolve("/driver/other/c.yaml", "/driver/home") == "/driver/other/c.yaml"  # not found: its error


def test_a_failing_filter_with_no_failures_selects_nothing(tmp_path: Path) -> None:
    (tmp_path / "c.yaml").write_text(CONFIG)
    suite = config.load([str(tmp_path / "c.yaml")])
    job = ShardJob(configs=(), driver_cwd=str(tmp_path), shard=(1, 1), failing=frozenset())
    assert list(shard_cases(suite, job)) == []  # as `eval --filter-failing` of an all-passing run
