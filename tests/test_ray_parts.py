"""`--executor ray` without Ray: usage errors, no `ray` import otherwise; the shard task and the driver's
collector, which need no Ray to run (test_ray_executor.py runs them on a local Ray instance)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from evalrun import config
from evalrun.cli import main
from evalrun.run.progress import Progress
from evalrun.run.ray_executor import Collector, ShardJob, resolve, run_shard, shard_cases, skip_bytes

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
    code = ("import sys; from evalrun.cli import main; import evalrun.run.ray_executor; "
            f"main(['eval', {str(tmp_path / 'c.yaml')!r}, '--no-table', '--no-cache', '--executor', 'local', "
            f"'--results-file', {str(tmp_path / 'r.jsonl')!r}]); "
            "print('ray' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip().splitlines()[-1] == "False", out.stderr


def _job(tmp_path: Path, k: int, n: int) -> ShardJob:
    return ShardJob(configs=(str(tmp_path / "c.yaml"),), driver_cwd=str(tmp_path), shard=(k, n),
                    options={"use_cache": False}, batch_s=0.05)


def test_a_shard_task_streams_its_cases_and_skips_those_the_driver_holds(tmp_path: Path) -> None:
    (tmp_path / "c.yaml").write_text(CONFIG)
    got = [rec for batch in run_shard(_job(tmp_path, 2, 3)) for rec in batch]
    assert sorted(index for index, _, _ in got) == [2, 3]  # positions 7/3 to 14/3 of 7: shard 2 of 3
    assert {json.loads(line)["vars"]["q"] for _, _, line in got} == {"c", "d"}
    assert all(status == "fail" for _, status, _ in got)
    again = [rec for batch in run_shard(_job(tmp_path, 2, 3), skip_bytes([3])) for rec in batch]
    assert [index for index, _, _ in again] == [2]
    assert not list(tmp_path.glob(".evalrun/last-run*"))  # a task never moves the user's last-run pointer


def test_shard_cases_compose_with_filters_as_eval_shard_does(tmp_path: Path) -> None:
    (tmp_path / "c.yaml").write_text(CONFIG)
    suite = config.load([str(tmp_path / "c.yaml")])
    job = ShardJob(configs=(), driver_cwd=str(tmp_path), shard=(1, 2), filter_first_n=5,
                   failing=(frozenset(c.id for c in shard_cases(suite, _job(tmp_path, 1, 1)) if c.index != 2),
                            frozenset()))
    assert [c.index for c in shard_cases(suite, job)] == [0, 3, 5]  # failing: all but 2; first 5; every 2nd
    assert [c.index for c in shard_cases(suite, job, {3})] == [0, 5]


def test_collector_keeps_each_case_once(tmp_path: Path) -> None:
    spool = tmp_path / "s.jsonl"
    c = Collector(spool, Progress(None, enabled=False))
    assert c.take(1, [(0, "pass", b'{"id":"a","index":0}\n'), (2, "fail", b'{"id":"c","index":2}\n')]) == 2
    assert c.take(1, [(2, "fail", b'{"id":"c","index":2}\n'), (5000, "pass", b'{"id":"z","index":5000}\n')]) == 1
    assert c.take(2, [(1, "error", b'{"id":"b","index":1}\n')]) == 1
    c.close()
    assert c.held(1) == [0, 2, 5000] and c.held(2) == [1] and c.duplicates == 1
    assert [json.loads(x)["id"] for x in spool.read_text().splitlines()] == ["a", "c", "z", "b"]
    assert c.progress.done == 4 and c.progress.errors == 1


def test_collector_fills_errors_for_undelivered_cases(tmp_path: Path) -> None:
    (tmp_path / "c.yaml").write_text(CONFIG)
    suite = config.load([str(tmp_path / "c.yaml")])
    c = Collector(tmp_path / "s.jsonl", Progress(None, enabled=False))
    c.take(1, [(0, "pass", b'{"id":"x","index":0}\n')])
    assert c.fill_errors(suite, shard_cases(suite, _job(tmp_path, 1, 2)), "task lost") == 2  # 1, 2
    c.close()
    recs = [json.loads(x) for x in (tmp_path / "s.jsonl").read_text().splitlines()]
    assert [r["index"] for r in recs] == [0, 1, 2]
    assert all(r["status"] == "error" and r["error"] == "task lost" for r in recs[1:])
    assert recs[1]["prompt_sha"] and recs[1]["prompt_index"] == 0


def test_config_paths_are_found_on_the_worker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "c.yaml").write_text(CONFIG)
    assert resolve(str(tmp_path / "sub" / "c.yaml"), "/elsewhere") == str(tmp_path / "sub" / "c.yaml")
    monkeypatch.chdir(tmp_path)  # as under `ray job submit --working-dir`: the same tree at another place
    assert resolve("/driver/home/sub/c.yaml", "/driver/home") == str(tmp_path / "sub" / "c.yaml")
    assert resolve("/driver/other/c.yaml", "/driver/home") == "/driver/other/c.yaml"  # not found: its error
