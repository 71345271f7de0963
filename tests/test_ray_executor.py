"""`eval --executor ray` on a local Ray instance started here: exactly the unsharded run's cases, summary and exit
code; a task whose worker dies mid-shard is retried with no case lost or duplicated. Skipped without Ray."""

from __future__ import annotations

import json
import logging
import signal
from collections.abc import Iterator
from pathlib import Path
from types import FrameType

import pytest

from evalrun.cli import main

ray = pytest.importorskip("ray")

TIME_LIMIT_S = 90  # a test that would hang fails instead


def _too_slow(signum: int, frame: FrameType | None) -> None:
    raise TimeoutError(f"a Ray test ran over {TIME_LIMIT_S}s")


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    old = signal.signal(signal.SIGALRM, _too_slow)
    signal.alarm(TIME_LIMIT_S)
    try:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level=logging.WARNING)
    finally:
        signal.alarm(0)
    yield
    ray.shutdown()
    signal.signal(signal.SIGALRM, old)


@pytest.fixture(autouse=True)
def _time_limit(local_ray: None) -> Iterator[None]:
    signal.alarm(TIME_LIMIT_S)
    yield
    signal.alarm(0)


CONFIG = """providers: [{id: echo, label: a}, {id: echo, label: b}]
prompts: ['Say {{q}} {{n}}', 'Tell {{q}}']
tests:
  - vars: {q: [hello, world, there, again], n: '1'}
    assert: [{type: contains, value: hello, metric: hi}]
  - vars: {q: fine, n: ['2', '3', '5']}
    assert: [{type: contains, value: fine}]
  - description: always fails
    vars: {q: nope, n: '4'}
    assert: [{type: equals, value: other}]
derivedMetrics: [{name: twice, value: 'hi * 2'}]
"""


def _records(path: Path) -> list[dict[str, object]]:
    """The records by case index (written as cases finish)."""
    out = []
    for line in path.read_text().splitlines():
        rec = json.loads(line)
        rec.pop("latency_ms", None)
        out.append(rec)
    return sorted(out, key=lambda r: int(r["index"]))  # type: ignore[call-overload]


def _eval(tmp_path: Path, name: str, *extra: str) -> int:
    return main(["eval", str(tmp_path / "c.yaml"), "--no-progress-bar", "--no-table", "--no-cache",
                 "--results-file", str(tmp_path / f"{name}.jsonl"), "-o", str(tmp_path / f"{name}.json"), *extra])


def test_ray_run_equals_the_unsharded_run(tmp_path: Path) -> None:
    (tmp_path / "c.yaml").write_text(CONFIG)
    want_code = _eval(tmp_path, "local")
    got_code = _eval(tmp_path, "ray", "--executor", "ray", "--ray-tasks", "3")
    assert got_code == want_code == 100
    want, got = _records(tmp_path / "local.jsonl"), _records(tmp_path / "ray.jsonl")
    assert len(want) == 32
    assert got == want  # the same cases, the same records
    lines = (tmp_path / "ray.jsonl").read_text().splitlines()
    assert sorted(json.loads(x)["index"] for x in lines) == list(range(32))  # each case once, as they arrived
    s_want = json.loads((tmp_path / "local.json").read_text())["summary"]
    s_got = json.loads((tmp_path / "ray.json").read_text())["summary"]
    for key in ("passed", "failed", "errors", "total", "pass_rate", "metrics", "derived_metrics", "tokens", "cost",
                "interrupted"):
        assert s_got[key] == s_want[key], key
    assert s_got["derived_metrics"]["twice"] == 8.0  # recomputed by the driver (merge alone cannot)


def test_filters_and_an_all_passing_run(tmp_path: Path) -> None:
    (tmp_path / "c.yaml").write_text(CONFIG)
    args = ("--filter-pattern", "^$", "--filter-first-n", "9")  # the tests without a description, first 9 cases
    _eval(tmp_path, "local", *args)
    assert _eval(tmp_path, "ray", *args, "--executor", "ray", "--ray-tasks", "2") == 100
    assert _records(tmp_path / "ray.jsonl") == _records(tmp_path / "local.jsonl")
    assert len(_records(tmp_path / "ray.jsonl")) == 9
    (tmp_path / "c.yaml").write_text(CONFIG.split("  - description")[0].replace("value: hello", "value: '{{q}}'"))
    assert _eval(tmp_path, "ok", "--executor", "ray") == 0


CRASHY = """def call_api(prompt, options, context):
    import os, pathlib, time
    here = pathlib.Path(__file__).parent
    with open(here / "calls.log", "a") as f:
        f.write(prompt + "\\n")
    time.sleep(0.15)
    if prompt == "q17" and not (here / "crashed").exists():
        (here / "crashed").write_text("once")
        time.sleep(1.0)  # the shard's earlier cases reach the driver first
        os._exit(1)  # the worker process dies: the task fails as on a lost node
    return prompt
"""


def test_a_task_that_dies_is_retried_without_duplicate_or_loss(tmp_path: Path) -> None:
    (tmp_path / "prov.py").write_text(CRASHY)
    (tmp_path / "c.yaml").write_text("providers: [file://prov.py]\nprompts: ['{{q}}']\ntests:\n"
                                     "  - vars: {q: [" + ", ".join(f"q{i}" for i in range(24)) + "]}\n"
                                     "    assert: [{type: starts-with, value: q}]\n")
    code = _eval(tmp_path, "ray", "--executor", "ray", "--ray-tasks", "2", "-j", "1")
    assert (tmp_path / "crashed").exists()  # the failure happened
    calls = (tmp_path / "calls.log").read_text().split()
    assert calls.count("q17") == 2  # ... and its shard ran again
    got = _records(tmp_path / "ray.jsonl")
    assert [r["index"] for r in got] == list(range(24))  # every case once
    assert all(r["status"] == "pass" for r in got) and code == 0
    # the retry skipped the cases the driver already held from the first attempt (shard 2: q1, q3, ..., q23)
    assert len(calls) < 12 + 9 + 12  # without it: shard 1, shard 2 up to q17, all of shard 2 again
    (tmp_path / "calls.log").unlink()
    _eval(tmp_path, "local")
    assert got == _records(tmp_path / "local.jsonl")


def test_a_task_that_cannot_load_the_config_makes_errors_not_passes(tmp_path: Path) -> None:
    from evalrun import config
    from evalrun.run.options import RunOptions
    from evalrun.run.progress import Progress
    from evalrun.run.workers import RayExecutor, job_for

    (tmp_path / "c.yaml").write_text(CONFIG)
    suite = config.load([str(tmp_path / "c.yaml")])
    opts = RunOptions(results_file=tmp_path / "r.jsonl", use_cache=False)
    job = job_for([str(tmp_path / "gone.yaml")], opts, cli_vars=None, strict=None)  # what a worker cannot see
    import asyncio

    outcome = asyncio.run(RayExecutor(suite, opts, job, tasks=2, progress=Progress(None, enabled=False)).run())
    assert outcome.summary["errors"] == outcome.summary["total"] == 32
    recs = _records(tmp_path / "r.jsonl")
    assert [r["index"] for r in recs] == list(range(32))
    assert all("the Ray task running this case failed: ConfigError" in str(r["error"]) for r in recs)
    assert "gone.yaml" in str(recs[0]["error"])


def test_resume_runs_only_the_missing_cases(tmp_path: Path) -> None:
    (tmp_path / "prov.py").write_text("def call_api(prompt, options, context):\n"
                                      f"    open({str(tmp_path / 'calls.log')!r}, 'a').write(prompt + '\\n')\n"
                                      "    return prompt\n")
    (tmp_path / "c.yaml").write_text("providers: [file://prov.py]\nprompts: ['{{q}}']\ntests:\n"
                                     "  - vars: {q: [" + ", ".join(f"q{i}" for i in range(10)) + "]}\n"
                                     "    assert: [{type: equals, value: q3}]\n")
    assert _eval(tmp_path, "r", "--executor", "ray", "--filter-first-n", "4") == 100
    assert _eval(tmp_path, "r", "--executor", "ray", "--resume", str(tmp_path / "r.jsonl")) == 100
    assert sorted((tmp_path / "calls.log").read_text().split()) == sorted(f"q{i}" for i in range(10))
    assert [r["index"] for r in _records(tmp_path / "r.jsonl")] == list(range(10))
    summary = json.loads((tmp_path / "r.json").read_text())["summary"]
    assert (summary["resumed"], summary["passed"], summary["failed"]) == (4, 1, 9)
