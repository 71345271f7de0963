"""llm-rubric through the LLM grader and the fake server."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalrun.assertions import engine
from evalrun.errors import ConfigError
from evalrun.types import AssertionSpec
from tests.fakeserver import FakeOpenAI
from tests.graderfakes import evaluate, make_grader, route, user_text
from tests.test_assertions_helpers import bad


def spec(**kw: object) -> AssertionSpec:
    return AssertionSpec(type="llm-rubric", key_path="tests[0].assert[0]", **kw)  # type: ignore[arg-type]


def test_pass_and_fail(fake_openai: FakeOpenAI) -> None:
    route(fake_openai, judge={"reason": "polite", "pass": True, "score": 0.9})
    result = evaluate(spec(value="is polite"), "Thank you!", {}, make_grader(fake_openai))
    assert result.pass_ and result.score == 0.9 and result.reason == "polite"
    text = user_text(fake_openai.requests[0])
    assert "is polite" in text and "<<<OUTPUT>>>\nThank you!\n<<<END OUTPUT>>>" in text
    route(fake_openai, judge={"reason": "rude", "pass": False, "score": 0.1})
    failed = evaluate(spec(value="is polite", negate=True), "Go away", {}, make_grader(fake_openai))
    assert failed.pass_ is True and failed.score == pytest.approx(0.9)  # not- inverts a higher-is-better score


def test_threshold_also_requires_score(fake_openai: FakeOpenAI) -> None:
    route(fake_openai, judge={"reason": "meh", "pass": True, "score": 0.6})
    result = evaluate(spec(value="r", threshold=0.8), "x", {}, make_grader(fake_openai))
    assert result.pass_ is False and result.reason == "meh (0.60 < threshold 0.80)"


def test_rubric_prompt_override_sees_vars(fake_openai: FakeOpenAI) -> None:
    route(fake_openai, judge={"reason": "r", "pass": True, "score": 1})
    s = spec(value="be brief", rubric_prompt="Lang {{ lang }}. Rubric: {{ rubric }}. Output: {{ output }}")
    evaluate(s, "hola", {"lang": "es"}, make_grader(fake_openai))
    assert user_text(fake_openai.requests[0]).startswith("Lang es. Rubric: be brief. Output: <<<OUTPUT>>>")


def test_invalid_reply_twice_is_an_error_never_inverted(fake_openai: FakeOpenAI) -> None:
    route(fake_openai, judge={"reason": "r", "pass": "yes", "score": 2})
    result = evaluate(spec(value="r", negate=True), "x", {}, make_grader(fake_openai))
    assert result.error is not None and result.pass_ is False and len(fake_openai.requests) == 2


def test_missing_rubric_is_config_error(tmp_path: Path) -> None:
    from evalrun.config import load

    # required unless a custom rubricPrompt holds the rubric: checked per test when the config loads
    cfg = tmp_path / "c.yaml"
    cfg.write_text("prompts: [hi]\nproviders: [echo]\ntests:\n  - assert: [{type: llm-rubric}]\n")
    with pytest.raises(ConfigError, match="value"):
        load([str(cfg)])
    with pytest.raises(ConfigError, match="rubricPrompt"):
        engine.build(spec(value="r", rubric_prompt=5))


def test_test_options_rubric_prompt_applies_when_the_assertion_has_none(fake_openai: FakeOpenAI) -> None:
    import asyncio

    from evalrun.assertions.base import AssertionContext
    from evalrun.types import Output
    from tests.graderfakes import make_case

    route(fake_openai, judge={"reason": "r", "pass": True, "score": 1})
    case = make_case({})
    case = type(case)(**{**case.__dict__, "test": type(case.test)(**{**case.test.__dict__,
                                                                      "options": {"rubricPrompt": "TEST {{ rubric }}"}})})
    s = spec(value="v")
    ctx = AssertionContext(output="o", response=Output(text="o"), vars={}, prompt="", case=case, value="v",
                           config={}, get_grader=lambda _s: make_grader(fake_openai))
    result = asyncio.run(engine.evaluate(s, ctx))
    assert result.pass_ and user_text(fake_openai.requests[0]) == "TEST v"


@pytest.mark.parametrize(("type_", "what"), [
    ("factuality", "the reference answer"), ("model-graded-closedqa", "the criterion"), ("g-eval", "the criteria"),
    ("select-best", "the criteria"), ("noise-sensitivity", "the ground truth"),
    ("context-recall", "the reference answer"), ("context-precision", "the reference answer"),
])
@pytest.mark.parametrize("value", ["  ", 3, ["a"]])
def test_a_graded_type_needs_its_text_value(type_: str, what: str, value: object) -> None:
    e = bad(type_, value)
    assert f"{type_} needs {what} as a non-empty string `value`" in str(e)
    assert e.key == "tests[0].assert[0].value" and e.hint
