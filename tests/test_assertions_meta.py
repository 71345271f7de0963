"""latency, cost, finish-reason."""

from __future__ import annotations

import pytest

from evalrun.types import Output
from tests.test_assertions_helpers import bad, bad_yaml, run


def _resp(**kw: object) -> dict[str, object]:
    return {"response": Output(text="x", **kw)}  # type: ignore[arg-type]


def test_latency() -> None:
    assert run("latency", "x", threshold=100, ctx_kw=_resp(latency_ms=99.0)).pass_
    assert run("latency", "x", threshold=100, ctx_kw=_resp(latency_ms=100.0)).pass_
    r = run("latency", "x", threshold=100, ctx_kw=_resp(latency_ms=250.0))
    assert not r.pass_ and "250ms" in r.reason
    assert run("not-latency", "x", threshold=100, ctx_kw=_resp(latency_ms=250.0)).pass_


def test_latency_of_cached_response_is_an_error() -> None:
    r = run("latency", "x", threshold=100, ctx_kw=_resp(latency_ms=1.0, cached=True))
    assert r.error and "--no-cache" in r.error and not r.pass_


def test_cost() -> None:
    assert run("cost", "x", threshold=0.01, ctx_kw=_resp(cost=0.005)).pass_
    assert not run("cost", "x", threshold=0.01, ctx_kw=_resp(cost=0.02)).pass_
    assert run("not-cost", "x", threshold=0.01, ctx_kw=_resp(cost=0.02)).pass_
    r = run("not-cost", "x", threshold=0.01, ctx_kw=_resp(cost=None))
    assert r.error and "no cost" in r.error and not r.pass_


def test_finish_reason() -> None:
    assert run("finish-reason", "x", "stop", ctx_kw=_resp(finish_reason="STOP")).pass_
    assert not run("finish-reason", "x", "stop", ctx_kw=_resp(finish_reason="length")).pass_
    assert run("not-finish-reason", "x", "stop", ctx_kw=_resp(finish_reason="length")).pass_
    r = run("finish-reason", "x", "stop", ctx_kw=_resp())
    assert not r.pass_ and "did not supply" in r.reason


@pytest.mark.parametrize(("type_", "value", "kw", "needle", "key"), [
    ("latency", None, {}, "needs a threshold", "threshold"),
    ("latency", None, {"threshold": -1}, "non-negative", "threshold"),
    ("finish-reason", None, {}, "value is required", "value"),
    ("latency", 100, {"threshold": 100}, "takes no value", "value"),
    ("cost", 0.1, {"threshold": 0.1}, "takes no value", "value"),
    ("finish-reason", 3, {}, "string value", "value"),
])
def test_bad_arguments(type_: str, value: object, kw: dict[str, object], needle: str, key: str) -> None:
    e = bad(type_, value, **kw)
    assert needle in str(e) and e.key == f"tests[0].assert[0].{key}"


def test_a_threshold_that_is_no_number_is_refused_by_the_loader() -> None:
    e = bad_yaml({"type": "cost", "threshold": "cheap"})
    assert "threshold must be a number" in str(e) and e.key == "tests[0].assert[0].threshold"
