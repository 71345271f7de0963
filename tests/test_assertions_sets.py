"""assert-set: weighted children, own threshold and weight, errors, run_child, aggregate interplay."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest

from evalrun.assertions import engine
from evalrun.types import AssertionResult, AssertionSpec
from evalrun.types import TestSpec as _TestSpec
from tests.test_assertions_helpers import LOC, bad, context, spec


def child(type_: str, value: object = None, **kw: object) -> AssertionSpec:
    negate = type_.startswith("not-")
    return AssertionSpec(type=type_[4:] if negate else type_, negate=negate, value=value, loc=LOC,
                         key_path="tests[0].assert[0].assert[0]", **kw)  # type: ignore[arg-type]


def set_result(output: str, *children: AssertionSpec, **kw: object) -> AssertionResult:
    s = spec("assert-set", children=tuple(children), **kw)
    return asyncio.run(engine.evaluate(s, context(output)))


def test_all_children_pass() -> None:
    r = set_result("alpha beta", child("contains", "alpha"), child("contains", "beta"))
    assert r.pass_ and r.score == 1.0 and len(r.children) == 2


def test_one_child_fails_without_threshold() -> None:
    r = set_result("alpha", child("contains", "alpha"), child("contains", "beta"))
    assert not r.pass_ and r.score == 0.5 and "beta" in r.reason


def test_threshold_decides() -> None:
    assert set_result("alpha", child("contains", "alpha"), child("contains", "beta"), threshold=0.5).pass_
    assert not set_result("alpha", child("contains", "alpha"), child("contains", "beta"), threshold=0.6).pass_


def test_child_weights() -> None:
    r = set_result("alpha", child("contains", "alpha", weight=3.0), child("contains", "beta"))
    assert r.score == pytest.approx(0.75)


def test_not_assert_set() -> None:
    s = spec("not-assert-set", children=(child("contains", "zzz"),))
    r = asyncio.run(engine.evaluate(s, context("alpha")))
    assert r.pass_ and r.score == 1.0


def test_child_error_makes_the_set_an_error() -> None:
    r = set_result("x", child("contains", "x"), child("not-python", "1/0"))
    assert r.error and "ZeroDivisionError" in r.error and r.score is None
    assert len(r.children) == 2


def test_set_weight_counts_in_test_score() -> None:
    s = spec("assert-set", children=(child("contains", "beta"),), weight=2.0)
    set_res = asyncio.run(engine.evaluate(s, context("alpha")))
    top = asyncio.run(engine.evaluate(spec("contains", "alpha"), context("alpha", "alpha")))
    test = _TestSpec(index=0, description=None, vars={}, asserts=(), threshold=0.3)
    status, ok, score, _ = engine.aggregate(test, [top, set_res])
    assert score == pytest.approx(1 / 3) and ok and status == "pass"


def test_run_child_is_used_when_the_runner_provides_it() -> None:
    seen: list[str] = []

    async def run_child(c: AssertionSpec) -> AssertionResult:
        seen.append(c.type)
        return await engine.evaluate(c, dataclasses.replace(context("alpha"), value="alpha"))

    s = spec("assert-set", children=(child("contains", "{{ word }}"),))
    ctx = dataclasses.replace(context("alpha"), run_child=run_child)
    r = asyncio.run(engine.evaluate(s, ctx))
    assert seen == ["contains"] and r.pass_


def test_children_are_built_at_load_time() -> None:
    e = bad("assert-set", children=(child("contians", "x"),))
    assert e.key == "tests[0].assert[0].assert[0].type"
    assert "needs a non-empty `assert`" in str(bad("assert-set"))
