"""Mastra's deterministic scorers as assertion types: pass, fail, not-, bad arguments, scale, input choice."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from evalrun.assertions import engine
from evalrun.types import AssertionResult, Output
from tests.test_assertions_helpers import bad, context, spec


def mrun(type_: str, output: str, value: Any = None, *, config: dict[str, Any] | None = None,
         vars: dict[str, Any] | None = None, response: Output | None = None, **kw: Any) -> AssertionResult:
    s = spec(type_, value, config=config or {}, **kw)
    return asyncio.run(engine.evaluate(s, context(output, value, vars=vars, response=response, config=config)))


def test_content_similarity_pass_fail_not_and_scale() -> None:
    r = mrun("content-similarity", "Paris is the capital of France.", "The capital of France is Paris.")
    assert r.pass_ and r.score == pytest.approx(0.88)  # lower-cased: string-similarity gives 0.88
    assert not mrun("content-similarity", "night", "nacht").pass_  # 0.25 < 0.5
    assert mrun("not-content-similarity", "night", "nacht").pass_
    scaled = mrun("content-similarity", "night", "nacht", config={"scale": 10}, threshold=2)
    assert scaled.score == pytest.approx(2.5) and scaled.pass_
    assert mrun("content-similarity", "A  B", "a b", config={"ignoreCase": False}).score < 1.0


def test_input_is_vars_query_else_the_prompt() -> None:
    assert mrun("textual-difference", "What is AI?", vars={"query": "What is AI?"}).score == 1.0
    assert mrun("textual-difference", "the prompt").score == 1.0  # the helper's rendered prompt
    assert mrun("textual-difference", "the prompt", "other text").score < 1.0  # value wins


def test_keyword_coverage_and_completeness() -> None:
    r = mrun("keyword-coverage", "I like React", "JavaScript frameworks like React and Vue")
    assert r.score == 0.25 and not r.pass_ and "missing: javascript, frameworks, vue" in r.reason
    assert mrun("keyword-coverage", "anything", "the and of").score == 1.0
    c = mrun("completeness", "cats and dogs", "cats and dogs and birds")
    assert c.score == pytest.approx(3 / 4) and c.pass_
    assert mrun("not-completeness", "zebra", "cats and dogs").pass_


def test_tone_consistency_modes() -> None:
    r = mrun("tone-consistency", "The support team was friendly and very helpful.",
             "The service was excellent and exceeded expectations!")
    assert r.score == pytest.approx(1 - abs(0.75 - 3 / 7)) and r.pass_
    stable = mrun("tone-consistency", "I hate it. I love it!")
    assert stable.score == 0.0 and not stable.pass_ and "variance 1.000" in stable.reason


def _tool_response(*names: str, text: str = "Let me check.") -> Output:
    calls = [{"id": f"c{i}", "type": "function", "function": {"name": n, "arguments": "{}"}}
             for i, n in enumerate(names)]
    raw = {"choices": [{"message": {"role": "assistant", "content": text, "tool_calls": calls}}]}
    return Output(text=text, raw=raw)


def test_tool_call_accuracy_reads_calls_next_to_the_text() -> None:
    r = mrun("tool-call-accuracy", "Let me check.", config={"expectedTool": "weather-tool"},
             response=_tool_response("weather-tool"))
    assert r.pass_ and r.score == 1.0 and "called weather-tool" in r.reason
    strict = mrun("tool-call-accuracy", "x", config={"expectedTool": "weather-tool", "strictMode": True},
                  response=_tool_response("search-tool", "weather-tool"))
    assert not strict.pass_ and strict.score == 0.0
    order = mrun("tool-call-accuracy", "x", config={"expectedToolOrder": ["auth-tool", "fetch-tool"]},
                 response=_tool_response("auth-tool", "log-tool", "fetch-tool"))
    assert order.pass_
    assert mrun("not-tool-call-accuracy", "no tools", config={"expectedTool": "weather-tool"}).pass_


def test_tool_calls_from_a_json_output() -> None:
    out = json.dumps([{"function": {"name": "weather-tool", "arguments": "{}"}}])
    assert mrun("tool-call-accuracy", out, config={"expectedTool": "weather-tool"}).pass_
    out = json.dumps({"tool_calls": [{"toolName": "search-tool"}]})
    assert not mrun("tool-call-accuracy", out, config={"expectedTool": "weather-tool"}).pass_


@pytest.mark.parametrize(("type_", "value", "config", "message"), [
    ("content-similarity", None, {"scale": 0}, "config.scale must be a positive number"),
    ("content-similarity", None, {"ignoreCase": "yes"}, "config.ignoreCase must be true or false"),
    ("keyword-coverage", None, {"strictMode": True}, "unknown config key 'strictMode'"),
    ("textual-difference", {"a": 1}, {}, "must be a string"),
    ("tool-call-accuracy", None, {}, "needs config.expectedTool or config.expectedToolOrder"),
    ("tool-call-accuracy", None, {"expectedToolOrder": "a"}, "must be a list of tool names"),
    ("tool-call-accuracy", None, {"expectedTool": "a", "judge": "model"}, "config.judge must be code or llm"),
    ("tool-call-accuracy", None, {"judge": "llm"}, "needs config.availableTools"),
    ("tool-call-accuracy", "x", {"expectedTool": "a"}, "takes no value"),
])
def test_bad_arguments_are_config_errors(type_: str, value: Any, config: dict[str, Any], message: str) -> None:
    e = bad(type_, value, config=config)
    assert message in str(e) and "suite.yaml:7" in str(e)


def test_deterministic_scorers_need_no_grader() -> None:
    for t in ("content-similarity", "textual-difference", "keyword-coverage", "completeness", "tone-consistency"):
        assert not spec(t).handler.graded  # type: ignore[union-attr]
    assert not spec("tool-call-accuracy", config={"expectedTool": "a"}).handler.graded  # type: ignore[union-attr]
    assert spec("tool-call-accuracy", config={"judge": "llm", "availableTools": ["a"]}).handler.graded  # type: ignore[union-attr]
