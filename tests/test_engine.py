"""engine.build / evaluate / aggregate: not-, weights, thresholds, errors, transforms, grader traces."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest

from evalrun.assertions import engine, registry
from evalrun.assertions.base import Assertion, AssertionContext, Score
from evalrun.errors import ConfigError, GraderError
from evalrun.types import AssertionResult, GraderCall, GraderTrace, TokenUsage
from evalrun.types import TestSpec as _TestSpec
from tests.test_assertions_helpers import bad, context, run, spec


def _res(pass_: bool, score: float | None, weight: float = 1.0, error: str | None = None,
         reason: str = "r") -> AssertionResult:
    return AssertionResult(type="x", pass_=pass_, score=score, threshold=None, weight=weight, reason=reason,
                           error=error)


def _test(threshold: float | None = None) -> _TestSpec:
    return _TestSpec(index=0, description=None, vars={}, asserts=(), threshold=threshold)


# ------------------------------------------------------------------ build
def test_unknown_type_names_location_key_and_suggestion() -> None:
    e = bad("contians", "x")
    assert e.file == "suite.yaml" and e.line == 7
    assert e.key == "tests[0].assert[0].type"
    assert "unknown assertion type 'contians'" in str(e)
    assert e.hint == "did you mean `contains`?"


def test_unknown_negated_type_suggests_negated_form() -> None:
    assert bad("not-contians", "x").hint == "did you mean `not-contains`?"


def test_unknown_type_without_close_match_points_to_list() -> None:
    assert "evalrun list" in (bad("zzzzzz").hint or "")


def test_build_validates_transform_code() -> None:
    e = bad("contains", "x", transform="output.upper(")
    assert e.key == "tests[0].assert[0].transform"


# ------------------------------------------------------------------ evaluate
def test_not_flips_pass_and_score() -> None:
    r = run("not-rouge-n", "the cat sat", "the cat sat")
    assert r.pass_ is False and r.score == pytest.approx(0.0)
    r = run("not-rouge-n", "a dog ran", "the cat sat")
    assert r.pass_ is True and r.score == pytest.approx(1.0)


def test_weight_metric_threshold_copied_to_result() -> None:
    r = run("levenshtein", "abc", "abd", weight=2.5, metric="closeness", threshold=1)
    assert (r.weight, r.metric, r.threshold, r.pass_) == (2.5, "closeness", 1, True)
    assert run("levenshtein", "abc", "xyz").threshold == 5      # default threshold reported


def test_metric_name_is_rendered_with_vars() -> None:
    r = run("contains", "x", "x", metric="acc_{{ lang }}", ctx_kw={"vars": {"lang": "fr"}})
    assert r.metric == "acc_fr"


def test_transform_applies_before_the_assertion() -> None:
    assert run("equals", "  Hello ", "HELLO", transform="output.strip().upper()").pass_
    assert not run("equals", "  Hello ", "HELLO").pass_


def test_transform_to_non_string_becomes_compact_json() -> None:
    r = run("equals", '{"a": {"b": 1}}', '{"b":1}', transform="json.loads(output)['a']")
    assert r.pass_, r.reason


def test_transform_sees_context_vars() -> None:
    r = run("equals", "x", "x-en", transform="output + '-' + context['vars']['lang']",
            ctx_kw={"vars": {"lang": "en"}})
    assert r.pass_


def test_transform_exception_is_an_error_never_inverted() -> None:
    for t in ("contains", "not-contains"):
        r = run(t, "abc", "a", transform="1/0")
        assert r.error is not None and "ZeroDivisionError" in r.error
        assert r.pass_ is False and r.score is None


class _GraderFails(Assertion):
    """Test double: the grader fails."""

    async def evaluate(self, ctx: AssertionContext) -> Score:
        raise GraderError("bad JSON from grader", raw="{not json")


class _Traced(Assertion):
    """Test double: returns a grader trace."""

    async def evaluate(self, ctx: AssertionContext) -> Score:
        trace = GraderTrace("openai/fake", [GraderCall("extract", "raw1", tokens=TokenUsage(3, 4, 7), cost=0.5),
                                            GraderCall("verify", "raw2", cached=True, cost=0.25)])
        return Score(True, 0.8, "ok", {"claims": ["a"]}, trace=trace, keep_score_on_negate=True)


class _Bug(Assertion):
    """Test double: a handler bug."""

    async def evaluate(self, ctx: AssertionContext) -> Score:
        raise KeyError("oops")


@pytest.fixture(autouse=True)
def _doubles(monkeypatch: pytest.MonkeyPatch) -> None:
    """Register the test doubles in a copy of the registry, so no other test sees them."""
    registry.load_all()
    monkeypatch.setitem(registry.__dict__, "_REGISTRY", dict(registry._REGISTRY))
    registry.register("test-grader-failure")(_GraderFails)
    registry.register("test-traced")(_Traced)
    registry.register("test-bug")(_Bug)


def test_grader_error_is_error_with_raw_reply_and_never_inverted() -> None:
    for t in ("test-grader-failure", "not-test-grader-failure"):
        r = run(t, "out")
        assert r.error and "grader error" in r.error
        assert r.pass_ is False and r.score is None
        assert r.details["raw_replies"] == ["{not json"]


def test_trace_is_copied_into_result() -> None:
    r = run("test-traced", "out")
    assert r.grader == "openai/fake"
    assert r.tokens == TokenUsage(3, 4, 7)
    assert r.cost == pytest.approx(0.75)
    assert [c["step"] for c in r.details["calls"]] == ["extract", "verify"]
    assert r.details["raw_replies"] == ["raw1", "raw2"]
    assert r.details["claims"] == ["a"]


def test_keep_score_on_negate() -> None:
    r = run("not-test-traced", "out")
    assert r.pass_ is False and r.score == pytest.approx(0.8)


def test_unexpected_handler_exception_is_an_error_with_traceback() -> None:
    r = run("test-bug", "out")
    assert r.error and "KeyError" in r.error
    assert "Traceback" in r.details["traceback"]


def test_evaluate_builds_handler_when_loader_did_not() -> None:
    s = dataclasses.replace(spec("contains", "a"), handler=None)
    assert asyncio.run(engine.evaluate(s, context("abc", "a"))).pass_


def test_templated_number_or_boolean_value_works_with_text_types() -> None:
    from evalrun import templating

    seven = templating.render_value("{{b}}", {"b": 7})
    for type_, output in (("starts-with", "7 apples"), ("contains", "is 7"), ("regex", "x7"), ("equals", "7")):
        r = asyncio.run(engine.evaluate(spec(type_, "{{b}}"), context(output, seven)))
        assert r.error is None and r.pass_, (type_, r.reason)
    flag = templating.render_value("{{ok}}", {"ok": True})
    assert asyncio.run(engine.evaluate(spec("starts-with", "{{ok}}"), context("true!", flag))).pass_


def test_literal_boolean_value_only_for_equals() -> None:
    assert run("equals", "true", True).pass_
    assert run("equals", "false", False).pass_
    for type_ in ("contains", "icontains", "starts-with"):
        assert "value" in str(bad(type_, True))


# ------------------------------------------------------------------ aggregate
def test_no_assertions_passes_with_score_one() -> None:
    assert engine.aggregate(_test(), []) == ("pass", True, 1.0, "No assertions")


def test_all_pass() -> None:
    status, ok, score, reason = engine.aggregate(_test(), [_res(True, 1.0), _res(True, 0.5)])
    assert (status, ok, score, reason) == ("pass", True, 0.75, "All assertions passed")


def test_one_failure_fails_with_its_reason() -> None:
    status, ok, score, reason = engine.aggregate(_test(), [_res(True, 1.0), _res(False, 0.0, reason="nope")])
    assert (status, ok, score, reason) == ("fail", False, 0.5, "nope")


def test_weighted_mean() -> None:
    _, _, score, _ = engine.aggregate(_test(), [_res(True, 1.0, weight=3), _res(False, 0.0, weight=1)])
    assert score == pytest.approx(0.75)


def test_weight_zero_is_reported_but_never_fails() -> None:
    status, ok, score, _ = engine.aggregate(_test(), [_res(True, 1.0), _res(False, 0.0, weight=0)])
    assert (status, ok, score) == ("pass", True, 1.0)


def test_all_weights_zero_scores_zero() -> None:
    assert engine.aggregate(_test(), [_res(True, 1.0, weight=0)])[2] == 0.0


def test_test_threshold_replaces_all_pass_rule() -> None:
    results = [_res(True, 1.0, weight=3), _res(False, 0.0)]
    status, ok, _, reason = engine.aggregate(_test(0.7), results)
    assert (status, ok) == ("pass", True) and reason == "Aggregate score 0.75 ≥ 0.7 threshold"
    status, ok, _, reason = engine.aggregate(_test(0.8), results)
    assert (status, ok) == ("fail", False) and reason == "Aggregate score 0.75 < 0.8 threshold"


def test_threshold_zero_counts_as_set() -> None:
    assert engine.aggregate(_test(0.0), [_res(False, 0.0)])[:2] == ("pass", True)


def test_any_error_makes_the_case_an_error() -> None:
    status, ok, score, reason = engine.aggregate(_test(0.1), [_res(True, 1.0), _res(False, None, error="boom")])
    assert (status, ok) == ("error", False)
    assert score == pytest.approx(0.5) and "boom" in reason


def test_unscored_pass_is_left_out_of_the_mean() -> None:
    # a graded assertion on an output with no claims passes with score None ("nothing to grade")
    status, ok, score, reason = engine.aggregate(_test(0.5), [_res(True, None)])
    assert (status, ok, score, reason) == ("pass", True, 1.0, "All assertions passed")
    status, ok, score, _ = engine.aggregate(_test(), [_res(True, 1.0), _res(True, None, weight=5)])
    assert (status, ok, score) == ("pass", True, 1.0)
    status, ok, score, _ = engine.aggregate(_test(0.8), [_res(True, 0.9), _res(True, None)])
    assert (status, ok, score) == ("pass", True, pytest.approx(0.9))


def test_threshold_with_no_scored_assertion_needs_every_assertion_to_pass() -> None:
    status, ok, score, _ = engine.aggregate(_test(0.0), [_res(True, None), _res(False, None, reason="no")])
    assert (status, ok, score) == ("fail", False, 0.0)


def test_config_error_type_is_what_build_raises() -> None:
    with pytest.raises(ConfigError):
        spec("equals")      # value required


def test_lower_is_better_scores_enter_the_case_score_as_their_complement() -> None:
    """examples/rag-app "solar eclipses": faithfulness 1, context-relevance 0.417, noise-sensitivity 0 (perfect,
    lower is better), latency 1 -> (1 + 0.417 + 1 + 1) / 4, not (1 + 0.417 + 0 + 1) / 4."""
    noise = dataclasses.replace(_res(True, 0.0), lower_is_better=True)
    test = _TestSpec(index=0, description=None, vars={}, asserts=())
    status, passed, score, _ = engine.aggregate(test, [_res(True, 1.0), _res(True, 0.417), noise, _res(True, 1.0)])
    assert status == "pass" and passed and score == pytest.approx((1 + 0.417 + 1 + 1) / 4)
    bad_noise = dataclasses.replace(_res(False, 0.75), lower_is_better=True)
    assert engine.aggregate(test, [_res(True, 1.0), bad_noise])[2] == pytest.approx((1 + 0.25) / 2)


def test_the_engine_marks_lower_is_better_results_unless_negated() -> None:
    """The handler's `lower_is_better` decides the direction (one source of truth); `keep_score_on_negate`
    alone (python's rule for returned scores) marks nothing: a python score of 0.8 enters a case as 0.8."""
    low = Score(True, 0.2, "low noise")
    plain = engine._result(spec("contains", "x"), None, low, None, True)
    negated = engine._result(spec("not-contains", "x"), None, low, None, True)
    assert plain.lower_is_better and plain.score == 0.2
    assert not negated.lower_is_better and negated.score == 0.2 and not negated.pass_
    kept = engine._result(spec("contains", "x"), None, Score(True, 0.8, "r", keep_score_on_negate=True), None)
    assert not kept.lower_is_better and engine.oriented(kept) == 0.8
