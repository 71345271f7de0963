"""Run engine: statuses, errors that stay per case, timeouts, concurrency bound, laziness, results file."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from evalrun.errors import ProviderError
from evalrun.run.options import RunOptions
from evalrun.run.runner import Runner
from evalrun.types import Output, ProviderSpec
from tests.test_runner_support import ScriptedProvider, check, make_test, simple_cases, suite


def _run(s: Any, tmp_path: Path, provider: ScriptedProvider | None = None, cases: Any = simple_cases,
         **opts: Any) -> Any:
    options = RunOptions(results_file=tmp_path / "results.jsonl", **opts)
    build = (lambda spec, base_dir, transport: provider) if provider else None
    return asyncio.run(Runner(s, options, build_provider=build, cases=cases).run())


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_pass_fail_and_results_file(tmp_path: Path) -> None:
    s = suite([
        make_test(0, {"q": "hello world"}, check("contains", "hello"), check("icontains", "WORLD")),
        make_test(1, {"q": "goodbye"}, check("contains", "hello")),
        make_test(2, {"q": "x"}, check("not-contains", "{{ q }}")),  # value rendered per case: fails
    ])
    out = _run(s, tmp_path)
    summary = out.summary
    assert (summary["passed"], summary["failed"], summary["errors"], summary["total"]) == (1, 2, 0, 3)
    records = sorted(_lines(tmp_path / "results.jsonl"), key=lambda r: r["index"])
    assert [r["status"] for r in records] == ["pass", "fail", "fail"]
    assert records[0]["output"] == "hello world" and records[0]["prompt"] == "hello world"
    assert [a["type"] for a in records[0]["assertions"]] == ["contains", "icontains"]
    assert records[2]["assertions"][0]["type"] == "not-contains"
    assert [r["status"] for r in out.iter_results()] == ["pass", "fail", "fail"]
    assert [rec["id"] for rec in out.iter_results()] == [r["id"] for r in records]


def test_provider_error_is_a_case_error_and_the_run_continues(tmp_path: Path) -> None:
    s = suite([make_test(i, {"q": f"q{i}"}, check("contains", "q")) for i in range(4)])
    replies = {"q1": ProviderError("boom 503"), "q2": KeyError("unexpected")}
    provider = ScriptedProvider(ProviderSpec("echo"), reply=lambda p: replies.get(p, p))
    out = _run(s, tmp_path, provider)
    assert (out.summary["passed"], out.summary["errors"]) == (2, 2)
    errors = sorted((r for r in _lines(tmp_path / "results.jsonl") if r["status"] == "error"),
                    key=lambda r: r["index"])
    assert "boom 503" in errors[0]["error"] and errors[0]["pass"] is False and errors[0]["assertions"] == []
    assert errors[1]["error"] == "provider echo raised KeyError: 'unexpected'"


def test_undefined_template_variable_makes_the_case_an_error(tmp_path: Path) -> None:
    s = suite([make_test(0, {"q": "a"}, check("contains", "a")),
               make_test(1, {"other": "b"}, check("contains", "b"))])
    out = _run(s, tmp_path)
    assert (out.summary["passed"], out.summary["errors"]) == (1, 1)
    err = next(r for r in _lines(tmp_path / "results.jsonl") if r["status"] == "error")
    assert "undefined template variable 'q'" in err["error"] and "tests[1]" in err["error"]


def test_assertion_value_template_error_is_a_case_error(tmp_path: Path) -> None:
    s = suite([make_test(0, {"q": "a"}, check("contains", "{{ missing }}"))])
    out = _run(s, tmp_path)
    assert out.summary["errors"] == 1
    assert "missing" in _lines(tmp_path / "results.jsonl")[0]["error"]


def test_per_case_timeout(tmp_path: Path) -> None:
    s = suite([make_test(i, {"q": f"q{i}"}) for i in range(3)])
    provider = ScriptedProvider(ProviderSpec("echo"), delay=0.0)
    slow = ScriptedProvider(ProviderSpec("echo"), delay=5.0)

    class Mixed(ScriptedProvider):
        async def call(self, prompt: Any, ctx: Any) -> Output:
            return await (slow if prompt == "q1" else provider).call(prompt, ctx)

    out = _run(s, tmp_path, Mixed(ProviderSpec("echo")), timeout_s=0.2)
    assert (out.summary["passed"], out.summary["errors"]) == (2, 1)
    assert out.summary["duration_s"] < 3
    err = next(r for r in _lines(tmp_path / "results.jsonl") if r["status"] == "error")
    assert err["error"].startswith("timed out after 0.2s")


def test_concurrency_is_bounded(tmp_path: Path) -> None:
    s = suite([make_test(i, {"q": f"q{i}"}) for i in range(20)])
    provider = ScriptedProvider(ProviderSpec("echo"), delay=0.02)
    _run(s, tmp_path, provider, max_concurrency=3)
    assert provider.max_inflight == 3
    assert len(provider.calls) == 20


def test_cases_are_pulled_lazily(tmp_path: Path) -> None:
    """The runner never reads more than max_concurrency cases ahead of the finished ones."""
    s = suite([make_test(i, {"q": f"q{i}"}) for i in range(50)])
    provider = ScriptedProvider(ProviderSpec("echo"), delay=0.001)
    pulled = 0
    ahead: list[int] = []

    def cases(st: Any, repeat: int) -> Any:
        nonlocal pulled
        for c in simple_cases(st, repeat):
            pulled += 1
            ahead.append(pulled - len(provider.calls))
            yield c

    _run(s, tmp_path, provider, cases=cases, max_concurrency=4)
    assert pulled == 50 and max(ahead) <= 4


def test_repeat_and_first_n_and_pattern_filters(tmp_path: Path) -> None:
    s = suite([make_test(0, {"q": "a"}, description="alpha"), make_test(1, {"q": "b"}, description="beta")])
    assert _run(s, tmp_path, repeat=3).summary["total"] == 6
    assert _run(s, tmp_path, repeat=3, filter_first_n=2).summary["total"] == 2
    out = _run(s, tmp_path, filter_pattern="^be")
    assert out.summary["total"] == 1 and next(out.iter_results())["description"] == "beta"


def test_filter_failing_reruns_only_failed_and_errored_cases(tmp_path: Path) -> None:
    s = suite([make_test(i, {"q": f"q{i}"}, check("contains", "q1")) for i in range(3)])
    first = _run(s, tmp_path)
    assert first.summary["failed"] == 2
    previous = tmp_path / "previous.jsonl"
    previous.write_text((tmp_path / "results.jsonl").read_text())
    provider = ScriptedProvider(ProviderSpec("echo"))
    again = _run(s, tmp_path, provider, filter_failing=str(previous))
    assert sorted(provider.calls) == ["q0", "q2"] and again.summary["total"] == 2


def test_resume_skips_finished_cases_and_keeps_them_in_the_totals(tmp_path: Path) -> None:
    s = suite([make_test(i, {"q": f"q{i}"}, check("contains", "q")) for i in range(6)])
    _run(s, tmp_path, filter_first_n=4)
    with open(tmp_path / "results.jsonl", "ab") as f:
        f.write(b'{"id": "torn')  # an interrupted write
    provider = ScriptedProvider(ProviderSpec("echo"))
    out = _run(s, tmp_path, provider, resume=True)
    assert sorted(provider.calls) == ["q4", "q5"]
    assert out.summary["total"] == 6 and out.summary["resumed"] == 4 and out.summary["passed"] == 6
    records = _lines(tmp_path / "results.jsonl")  # torn line dropped, nothing repeated
    assert len(records) == 6 and len({r["id"] for r in records}) == 6
    assert [r["index"] for r in out.iter_results()] == list(range(6))


def test_cancellation_keeps_finished_results(tmp_path: Path) -> None:
    s = suite([make_test(i, {"q": f"q{i}"}) for i in range(100)])
    provider = ScriptedProvider(ProviderSpec("echo"), delay=0.01)
    options = RunOptions(results_file=tmp_path / "results.jsonl", max_concurrency=2)

    async def main() -> Any:
        task = asyncio.ensure_future(Runner(s, options, build_provider=lambda *a: provider,
                                            cases=simple_cases).run())
        await asyncio.sleep(0.15)
        task.cancel()  # what Ctrl-C does to asyncio.run's main task
        return await task

    out = asyncio.run(main())
    assert out.interrupted and 0 < out.summary["total"] < 100
    assert len(_lines(tmp_path / "results.jsonl")) == out.summary["total"]


def test_test_level_transform_and_raw_python_value(tmp_path: Path) -> None:
    s = suite([make_test(0, {"q": "hello"}, check("equals", "HELLO!"), options={"transform": "output.upper() + '!'"}),
               make_test(1, {"q": "x"}, options={"transform": "1/0"})])
    out = _run(s, tmp_path)
    records = sorted(_lines(tmp_path / "results.jsonl"), key=lambda r: r["index"])
    assert records[0]["status"] == "pass" and records[0]["output"] == "HELLO!"
    assert records[1]["status"] == "error" and "ZeroDivisionError" in records[1]["error"]
    assert out.summary["errors"] == 1


def test_provider_and_grader_tokens_are_split(tmp_path: Path) -> None:
    from evalrun.types import TokenUsage

    s = suite([make_test(0, {"q": "a"}, check("contains", "a"))])
    provider = ScriptedProvider(ProviderSpec("echo"), reply=lambda p: Output(
        text=p, tokens=TokenUsage(10, 5, 15), cost=0.5, cached=True))
    summary = _run(s, tmp_path, provider).summary
    assert summary["tokens"]["provider"]["total"] == 15 and summary["tokens"]["grader"]["total"] == 0
    assert summary["cost"] == {"provider": 0.5, "grader": 0.0, "total": 0.5} and summary["cached"] == 1


def test_graded_assertion_reports_its_grader(tmp_path: Path) -> None:
    s = suite([make_test(0, {"q": "Paris is the capital of France.", "context": "Paris is the capital of France."},
                         check("faithfulness"))])
    out = _run(s, tmp_path)
    assert out.summary["graders"] and out.summary["graders"][0].startswith("builtin")
    rec = next(out.iter_results())
    assert rec["assertions"][0]["grader"] is not None


def test_an_error_from_the_case_stream_stops_every_worker(tmp_path: Path) -> None:
    from evalrun.errors import ConfigError

    s = suite([make_test(i, {"q": f"q{i}"}) for i in range(10)])
    provider = ScriptedProvider(ProviderSpec("echo"), delay=0.01)

    def cases(st: Any, repeat: int) -> Any:
        for i, c in enumerate(simple_cases(st, repeat)):
            if i == 5:
                raise ConfigError("bad var file", file="x.yaml", line=3)
            yield c

    with pytest.raises(ConfigError, match="bad var file"):
        _run(s, tmp_path, provider, cases=cases, max_concurrency=3)
    assert len(_lines(tmp_path / "results.jsonl")) <= 5
