"""Named metrics and derivedMetrics (promptfoo's totals-then-expression rules)."""

from __future__ import annotations

import math

import pytest

from evalrun.assertions.engine import MetricTotals, case_metrics, compile_derived
from evalrun.errors import ConfigError
from evalrun.types import AssertionResult


def res(metric: str | None, score: float | None, weight: float = 1.0,
        children: tuple[AssertionResult, ...] = ()) -> AssertionResult:
    return AssertionResult(type="x", pass_=bool(score), score=score, threshold=None, weight=weight, reason="",
                           metric=metric, children=children)


def test_case_metrics_weighted_with_set_children() -> None:
    inner = (res("tone", 1.0, weight=1.0), res("tone", 0.0, weight=3.0))
    got = case_metrics([res("acc", 1.0, 2.0), res("acc", 0.5), res(None, 1.0), res("set", 0.25, 2.0, inner)])
    assert got["acc"] == (2.5, 3.0)
    assert got["set"] == (0.5, 2.0)
    assert got["tone"] == (2.0, 8.0)          # children weights scale with the set's weight


def test_errors_count_as_zero() -> None:
    assert case_metrics([res("m", None)]) == {"m": (0.0, 1.0)}


def test_totals_averages_and_derived() -> None:
    t = MetricTotals()
    t.add([res("tp", 1.0), res("fp", 0.0)])
    t.add([res("tp", 1.0), res("fp", 1.0)])
    t.add([res("tp", 0.0), res("fp", 1.0)])
    assert t.averages() == {"fp": pytest.approx(2 / 3), "tp": pytest.approx(2 / 3)}
    defs = compile_derived([{"name": "precision", "value": "tp / (tp + fp)"},
                            {"name": "per_case", "value": "precision * 100 / __count"},
                            {"name": "sq", "value": "max(tp, fp) ^ 2"},
                            {"name": "ghost", "value": "nope + 1"}])
    d = t.derived(defs)
    assert d["precision"] == pytest.approx(0.5)
    assert d["per_case"] == pytest.approx(50 / 3)
    assert d["sq"] == pytest.approx(4.0)
    assert d["ghost"] is None


def test_division_by_zero_is_nan_or_infinity() -> None:
    t = MetricTotals()
    t.add([res("a", 0.0), res("b", 1.0)])
    d = t.derived(compile_derived([{"name": "n", "value": "a / a"}, {"name": "i", "value": "b / a"}]))
    assert math.isnan(d["n"] or 0.0) and d["i"] == math.inf


@pytest.mark.parametrize(("entry", "needle"), [
    ({"value": "a"}, "needs a `name`"),
    ({"name": "x"}, "needs an expression"),
    ({"name": "x", "value": "a +"}, "cannot use"),
    ({"name": "x", "value": "__import__('os')"}, "unknown function"),
    ({"name": "x", "value": "a.b"}, "Attribute is not allowed"),
    ({"name": "x", "value": "'text'"}, "only numbers"),
])
def test_bad_derived_metrics_are_config_errors(entry: dict[str, str], needle: str) -> None:
    with pytest.raises(ConfigError, match="derived|cannot|needs") as e:
        compile_derived([entry])
    assert needle in str(e.value)
    assert e.value.key is not None and e.value.key.startswith("derivedMetrics[0]")


def test_only_arithmetic_and_comparisons_evaluate() -> None:
    t = MetricTotals()
    t.add([res("a", 1.0)])
    d = t.derived(compile_derived([{"name": "floor", "value": "a // 2"}, {"name": "cmp", "value": "a < 2 < 3"},
                                   {"name": "pick", "value": "round(a / 3, 2) if a > 0.5 else 0"}]))
    assert d == {"floor": None, "cmp": 1.0, "pick": 0.33}
