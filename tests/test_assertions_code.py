"""python and javascript assertions: result forms, thresholds, not-, errors, file:// functions."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from evalrun.errors import Location
from tests.test_assertions_helpers import bad, run

FIX = Path(__file__).parent / "fixtures" / "assertions"
needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="node not installed")


@pytest.mark.parametrize(("code", "output", "pass_", "score"), [
    ("'world' in output", "hello world", True, 1.0),
    ("'world' in output", "hello", False, 0.0),
    ("len(output) / 10", "hello", True, 0.5),         # number: passes when > 0
    ("0", "hello", False, 0.0),
    ("'true'", "x", True, 1.0),                       # the strings true/false count as booleans
    ("{'pass': False, 'score': 0.3, 'reason': 'meh'}", "x", False, 0.3),
    ('\'{"pass": true, "score": 0.9, "reason": "json text"}\'', "x", True, 0.9),
])
def test_python_result_forms(code: str, output: str, pass_: bool, score: float) -> None:
    r = run("python", output, code)
    assert (r.pass_, r.score, r.error) == (pass_, pytest.approx(score), None)


def test_python_threshold_on_numbers_and_mappings() -> None:
    assert not run("python", "hello", "len(output) / 10", threshold=0.6).pass_
    assert run("python", "hello", "len(output) / 10", threshold=0.5).pass_
    r = run("python", "x", "{'pass': True, 'score': 0.25, 'reason': 'r'}", threshold=0.5)
    assert not r.pass_ and "less than threshold" in r.reason


def test_python_not_flips_pass_and_keeps_numeric_scores() -> None:
    r = run("not-python", "hello", "'z' in output")
    assert r.pass_ and r.score == 1.0
    r = run("not-python", "hello", "0.25")
    assert not r.pass_ and r.score == 0.25


def test_python_reads_context() -> None:
    assert run("python", "abc", "output == context['vars']['expected'] and context['prompt'] == 'the prompt'",
               ctx_kw={"vars": {"expected": "abc"}}).pass_


def test_python_file_function() -> None:
    import asyncio
    import dataclasses

    from evalrun.assertions import engine
    from evalrun.types import AssertionSpec
    from tests.test_assertions_helpers import context

    loc = Location(str(FIX / "suite.yaml"), 4)     # file:// resolves against the config file's directory
    s = AssertionSpec(type="python", value="file://checks.py:scored", loc=loc, key_path="tests[0].assert[0]")
    s = dataclasses.replace(s, handler=engine.build(s))
    res = asyncio.run(engine.evaluate(s, context("x", vars={"b": 1, "a": 2})))
    assert res.pass_ and res.score == 0.6 and res.reason == "vars=['a', 'b']"


def test_python_runtime_exception_fails_with_the_reason_as_in_promptfoo() -> None:
    r = run("python", "x", "1/0")
    assert r.error is None and r.pass_ is False and "ZeroDivisionError" in r.reason
    r = run("not-python", "x", "1/0")  # a failure flipped by not- must never pass: an ERROR
    assert r.error and "ZeroDivisionError" in r.error and r.pass_ is False and r.score is None


def test_python_bad_return_type_fails_with_the_reason() -> None:
    r = run("python", "x", "None")
    assert not r.pass_ and r.error is None and "needs `return`" in r.reason
    r = run("python", "x", "[1, 2]")
    assert not r.pass_ and "must return a boolean, number" in r.reason
    for incomplete in ("{'score': 1}", "{'pass': True}", "{'pass': 1, 'score': 1, 'reason': 'r'}",
                       "{'pass': True, 'score': 0.5}"):
        r = run("python", "x", incomplete)      # promptfoo needs pass (bool), score (number) and reason
        assert not r.pass_ and "`pass` (boolean), `score` (number) and `reason`" in r.reason, incomplete
    assert "returned NaN" in run("python", "x", "float('nan')").reason
    assert run("not-python", "x", "None").error


@needs_node
def test_javascript_mapping_ignores_threshold_and_nan_is_an_error() -> None:
    r = run("javascript", "x", "({pass: true, score: 0.2, reason: 'x'})", threshold=0.5)
    assert r.pass_ and r.score == 0.2                      # promptfoo applies no threshold to JS mappings
    r = run("javascript", "x", "NaN")                      # a failure, as code that throws (and as in promptfoo)
    assert not r.pass_ and "returned NaN" in r.reason
    r = run("not-javascript", "x", "NaN")  # promptfoo: NaN > 0 is false, so negated it passes; evalrun: an ERROR,
    assert not r.pass_ and r.error and "returned NaN" in r.error  # as negated code that throws (docs/config.md)


@pytest.mark.parametrize(("value", "needle"), [
    (None, "value is required"),
    ("len(output", "does not compile"),
    (5, "code as a string"),
    ("file://nowhere.py:f", "file not found"),
])
def test_python_bad_arguments(value: object, needle: str) -> None:
    assert needle in str(bad("python", value))


@needs_node
@pytest.mark.parametrize(("code", "output", "pass_", "score"), [
    ("output.length === 5", "hello", True, 1.0),
    ("output.includes('z')", "hello", False, 0.0),
    ("output.length / 10", "hello", True, 0.5),
    ("const n = output.length; n > 3", "hello", True, 1.0),
    ("const n = output.length;\nreturn {pass: n > 9, score: 0.4, reason: 'short'};", "hello", False, 0.4),
    ("Infinity", "x", True, float("inf")),
    ("console.log(JSON.stringify({id: 1, ok: true, result: false}));\nreturn true", "x", True, 1.0),
    ("Promise.resolve(true)", "x", True, 1.0),
    ("context.vars.who === 'ann'", "x", True, 1.0),
])
def test_javascript_result_forms(code: str, output: str, pass_: bool, score: float) -> None:
    r = run("javascript", output, code, ctx_kw={"vars": {"who": "ann"}})
    assert (r.pass_, r.score, r.error) == (pass_, pytest.approx(score), None)


@needs_node
def test_javascript_not_and_threshold() -> None:
    assert run("not-javascript", "hello", "output.includes('z')").pass_
    assert not run("javascript", "hello", "output.length / 10", threshold=0.6).pass_


@needs_node
def test_javascript_exception_or_undefined_fails_as_in_promptfoo() -> None:
    r = run("javascript", "x", "JSON.parse(output).a")
    assert r.error is None and "SyntaxError" in r.reason and r.pass_ is False
    r = run("javascript", "x", "undefined")
    assert r.error is None and "returned nothing" in r.reason and r.pass_ is False
    r = run("not-javascript", "x", "JSON.parse(output).a")  # never flipped into a pass
    assert r.error and "SyntaxError" in r.error and r.pass_ is False


@needs_node
def test_javascript_shares_one_node_process(monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio

    from evalrun import jsnode
    from evalrun.assertions import engine
    from tests.test_assertions_helpers import context, spec

    started: list[int] = []
    real_init = jsnode._NodeProcess.__init__

    def counting_init(self: jsnode._NodeProcess, node: str, flags: tuple[str, ...] = ()) -> None:
        real_init(self, node, flags)
        started.append(self.proc.pid)

    jsnode.shutdown()
    monkeypatch.setattr(jsnode._NodeProcess, "__init__", counting_init)
    s = spec("javascript", "output.length")

    async def many() -> list[float | None]:
        results = await asyncio.gather(*(engine.evaluate(s, context("x" * i)) for i in range(1, 21)))
        return [r.score for r in results]

    assert asyncio.run(many()) == [float(i) for i in range(1, 21)]
    assert asyncio.run(many()) == [float(i) for i in range(1, 21)]     # a second event loop reuses it
    assert len(started) == 1


@needs_node
def test_javascript_timeout_replaces_the_stuck_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVALRUN_JS_TIMEOUT", "0.5")
    r = run("javascript", "x", "while (true) {}\nreturn true")
    assert r.error and "did not finish within 0.5s" in r.error
    assert run("javascript", "abc", "output.length === 3").pass_      # a fresh process serves the next call


@needs_node
def test_javascript_file_function() -> None:
    import asyncio
    import dataclasses

    from evalrun.assertions import engine
    from evalrun.types import AssertionSpec
    from tests.test_assertions_helpers import context

    s = AssertionSpec(type="javascript", value="file://checks.js:graded", loc=Location(str(FIX / "s.yaml"), 1))
    s = dataclasses.replace(s, handler=engine.build(s))
    r = asyncio.run(engine.evaluate(s, context("x", vars={"who": "bob"})))
    assert (r.pass_, r.score, r.reason) == (False, 0.2, "js says no to bob")


def test_javascript_without_node_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from evalrun import jsnode

    jsnode.shutdown()
    monkeypatch.setattr(jsnode, "node_path", lambda: None)
    r = run("javascript", "x", "true")
    assert r.error and "Node.js is required" in r.error


@needs_node
def test_javascript_syntax_error_is_a_config_error() -> None:
    e = bad("javascript", "output.length ===")
    assert "JavaScript code does not compile: SyntaxError" in str(e)
    assert e.key == "tests[0].assert[0].value" and e.line == 7
    assert "does not compile" in str(bad("javascript", "const x = ;\nreturn x"))


def test_javascript_bad_arguments() -> None:
    assert "value is required" in str(bad("javascript"))
    assert "non-empty string" in str(bad("javascript", "  "))
