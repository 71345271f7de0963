"""trace-span-count, trace-span-duration, trace-error-spans on the trace a provider returns: globs, bounds,
percentiles, error detection, not-, no trace -> an ERROR, bad values; end to end through a Python provider."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from evalrun.assertions.traces import is_error_span, matches, percentile
from evalrun.cli import main
from evalrun.types import Output
from tests.test_assertions_helpers import bad, run

SPANS = [
    {"name": "retrieve.docs", "startTime": 0, "endTime": 120},
    {"name": "retrieve.rerank", "startTime": 120, "endTime": 150},
    {"name": "llm.call", "startTime": 150, "endTime": 1150, "statusCode": 2, "statusMessage": "rate limited"},
    {"name": "llm.call", "startTime": 1150, "endTime": 1400},
    {"name": "tool.search", "attributes": {"http.status_code": "503"}},
]


def _run(type_: str, value: Any, spans: list[dict[str, Any]] | None = SPANS) -> Any:
    raw = {"output": "x"} if spans is None else {"output": "x", "trace": {"spans": spans}}
    return run(type_, "x", value, ctx_kw={"response": Output(text="x", raw=raw)})


def test_glob_matching_and_helpers() -> None:
    assert matches("Retrieve.Docs", "retrieve.*") and matches("llm.call", "llm.?all") and matches("a", "*")
    assert not matches("retrieveXdocs", "retrieve.docs") and not matches("pre.retrieve.docs", "retrieve*")
    assert percentile([100, 10, 50, 30], 50) == 30 and percentile([100, 10, 50, 30], 95) == 100
    assert percentile([5], 0) == 5
    assert is_error_span({"statusCode": 2}) and is_error_span({"statusCode": 500})
    assert is_error_span({"attributes": {"error": "true"}}) and is_error_span({"attributes": {"exception": {}}})
    assert is_error_span({"attributes": {"otel.status_code": "ERROR"}})
    assert is_error_span({"statusMessage": "Request Timeout"})
    assert not is_error_span({"statusCode": 1, "attributes": {"error": False}, "statusMessage": "ok"})


def test_span_count() -> None:
    r = _run("trace-span-count", {"pattern": "retrieve.*", "min": 2, "max": 2})
    assert r.pass_ and r.reason == ('Found 2 spans matching pattern "retrieve.*" (expected 2-2). Matched spans: '
                                    "retrieve.docs, retrieve.rerank")
    r = _run("trace-span-count", {"pattern": "llm*", "max": 1})
    assert not r.pass_ and r.reason.startswith('Found 2 spans matching pattern "llm*", expected at most 1')
    assert not _run("trace-span-count", {"pattern": "db.*", "min": 1}).pass_
    assert _run("not-trace-span-count", {"pattern": "db.*", "min": 1}).pass_


def test_span_duration() -> None:
    r = _run("trace-span-duration", {"max": 1000})
    assert r.pass_ and "All 4 spans" in r.reason and "(max: 1000ms)" in r.reason   # tool.search has no timing
    r = _run("trace-span-duration", {"pattern": "retrieve*", "max": 100})
    assert not r.pass_ and r.reason == "1 span(s) exceed duration threshold 100ms. Slowest: retrieve.docs (120ms)"
    r = _run("trace-span-duration", {"max": 200, "percentile": 50})      # durations 30 120 250 1000: p50 = 120
    assert r.pass_ and r.reason == "50th percentile duration (120ms) is within threshold 200ms"
    r = _run("trace-span-duration", {"max": 200, "percentile": 75})      # p75 = 250
    assert not r.pass_ and r.details["percentile"] == 250 and "llm.call (1000ms), llm.call (250ms)" in r.reason
    assert _run("trace-span-duration", {"pattern": "none", "max": 1}).pass_
    assert _run("not-trace-span-duration", {"pattern": "retrieve*", "max": 100}).pass_


def test_error_spans() -> None:
    r = _run("trace-error-spans", None)       # default: no error allowed
    assert not r.pass_ and r.reason == ("Found 2 error spans, expected at most 0. Errors: llm.call (rate limited), "
                                        "tool.search")
    assert _run("trace-error-spans", 2).pass_
    r = _run("trace-error-spans", {"max_percentage": 30})               # 2 of 5 = 40%
    assert not r.pass_ and r.reason == "Error rate 40.0% exceeds threshold 30% (2 errors out of 5 spans)"
    r = _run("trace-error-spans", {"pattern": "retrieve*"})
    assert r.pass_ and r.reason == 'No errors found in 2 spans matching pattern "retrieve*"'
    assert _run("trace-error-spans", {"pattern": "db*"}).pass_
    assert _run("not-trace-error-spans", 0).pass_


@pytest.mark.parametrize("type_", ["trace-span-count", "trace-span-duration", "trace-error-spans"])
def test_no_trace_is_an_error(type_: str) -> None:
    value = {"pattern": "*", "max": 1}
    r = _run(f"not-{type_}", {k: v for k, v in value.items() if k in ("pattern", "max") and
                              (k != "max" or type_ != "trace-error-spans")}, spans=None)
    assert r.error and "No trace data available" in r.error and not r.pass_


@pytest.mark.parametrize(("type_", "value", "msg"), [
    ("trace-span-count", {"min": 1}, "pattern property"),
    ("trace-span-count", "llm*", "needs a mapping"),
    ("trace-span-count", {"pattern": "a", "min": -1}, "non-negative"),
    ("trace-span-duration", {"pattern": "a"}, "max property"),
    ("trace-span-duration", {"max": 5, "percentile": 120}, "0 to 100"),
    ("trace-span-duration", {"max": 5, "pctile": 9}, "unknown key(s) pctile"),
    ("trace-error-spans", -1, "non-negative"),
    ("trace-error-spans", {"max_count": "two"}, "non-negative number"),
])
def test_bad_values(type_: str, value: Any, msg: str) -> None:
    assert msg in bad(type_, value).message


def test_a_python_provider_returns_its_trace(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "agent.py").write_text(textwrap.dedent(f"""\
        def call_api(prompt, options, context):
            return {{"output": "done", "trace": {{"spans": {json.dumps(SPANS)}}}}}
        """))
    (tmp_path / "suite.yaml").write_text(textwrap.dedent("""\
        prompts: ["go"]
        providers: [file://agent.py]
        tests:
          - assert:
              - {type: trace-span-count, value: {pattern: "llm.*", min: 1}}
              - {type: trace-error-spans, value: {max_count: 1}}
        """))
    main(["eval", "suite.yaml", "--no-cache", "-o", "out.json", "--no-table"])
    capsys.readouterr()
    (res,) = json.loads((tmp_path / "out.json").read_text())["results"]
    assert res["status"] == "fail"
    assert [a["pass"] for a in res["assertions"]] == [True, False]
