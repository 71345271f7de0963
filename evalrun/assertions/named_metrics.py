"""Named metrics (`metric:` on assertions) and `derivedMetrics` (mathjs-like arithmetic over the metrics' weighted
totals and `__count`, in order), aggregated as promptfoo does."""

from __future__ import annotations

import ast
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import simpleeval

from evalrun.errors import ConfigError, Location
from evalrun.types import AssertionResult

_FUNCS: dict[str, Callable[..., float]] = {
    "min": min, "max": max, "abs": abs, "sqrt": math.sqrt, "round": round, "floor": math.floor,
    "ceil": math.ceil, "log": math.log, "exp": math.exp, "log10": math.log10, "pow": math.pow,
}


def _field(r: AssertionResult | Mapping[str, Any], name: str) -> Any:
    return r.get(name) if isinstance(r, Mapping) else getattr(r, name)


def case_metrics(results: Iterable[AssertionResult | Mapping[str, Any]],
                 scale: float = 1.0) -> dict[str, tuple[float, float]]:
    """Per metric name: (sum of score*weight, sum of weight) over the results (or their records) and children."""
    out: dict[str, tuple[float, float]] = {}
    for r in results:
        w = float(_field(r, "weight") if _field(r, "weight") is not None else 1.0) * scale
        metric = _field(r, "metric")
        if metric:
            s, t = out.get(metric, (0.0, 0.0))
            out[metric] = (s + (_field(r, "score") or 0.0) * w, t + w)
        children = _field(r, "children")
        if children:
            for name, (s2, t2) in case_metrics(children, w).items():
                if name == metric:
                    continue
                s, t = out.get(name, (0.0, 0.0))
                out[name] = (s + s2, t + t2)
    return out


@dataclass(frozen=True)
class DerivedMetric:
    name: str
    expr: ast.Expression
    source: str


def compile_derived(defs: Sequence[Mapping[str, Any]], *, loc: Location | None = None) -> list[DerivedMetric]:
    """Parse `derivedMetrics` entries ({name, value}); a bad expression is a ConfigError naming it."""
    out = []
    for i, d in enumerate(defs):
        key = f"derivedMetrics[{i}]"
        name, value = d.get("name"), d.get("value")
        if not isinstance(name, str) or not name:
            raise ConfigError.at(loc, "a derived metric needs a `name`", key=key)
        if not isinstance(value, str) or not value.strip():
            raise ConfigError.at(loc, f"derived metric {name!r} needs an expression as `value`", key=f"{key}.value",
                                 hint="e.g. value: \"2 * precision * recall / (precision + recall)\"")
        try:
            tree = ast.parse(value.replace("^", "**"), mode="eval")
            _check(tree.body)
        except (SyntaxError, ValueError) as e:
            msg = e.msg if isinstance(e, SyntaxError) else str(e)
            raise ConfigError.at(loc, f"derived metric {name!r}: cannot use {value!r}: {msg}",
                                 key=f"{key}.value", hint="use numbers, metric names, + - * / ^ % and "
                                 f"{', '.join(sorted(_FUNCS))}") from None
        out.append(DerivedMetric(name, tree, value))
    return out


_ALLOWED = (ast.BinOp, ast.UnaryOp, ast.Constant, ast.Name, ast.Call, ast.Load, ast.IfExp, ast.Compare,
            ast.operator, ast.unaryop, ast.cmpop)


def _check(node: ast.AST) -> None:
    for n in ast.walk(node):
        if not isinstance(n, _ALLOWED):
            raise ValueError(f"{type(n).__name__} is not allowed")
        if isinstance(n, ast.Constant) and not isinstance(n.value, (int, float)):
            raise ValueError("only numbers are allowed as constants")
        if isinstance(n, ast.Call) and not (isinstance(n.func, ast.Name) and n.func.id in _FUNCS):
            raise ValueError("unknown function")


def _div(a: float, b: float) -> float:
    if b == 0:
        return math.nan if a == 0 or math.isnan(a) else math.copysign(math.inf, a)
    return a / b


#: Arithmetic and comparisons only (simpleeval's), with mathjs's division and modulo by zero: NaN or infinity.
_OPERATORS = {**{op: fn for op, fn in simpleeval.DEFAULT_OPERATORS.items() if op in (
    ast.Add, ast.Sub, ast.Mult, ast.Pow, ast.USub, ast.UAdd, ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE)},
    ast.Div: _div, ast.Mod: lambda a, b: math.nan if b == 0 else math.fmod(a, b)}


@dataclass
class MetricTotals:
    """Running totals of named metrics over cases (one per run, or per prompt x provider)."""

    sums: dict[str, float] = field(default_factory=dict)
    weights: dict[str, float] = field(default_factory=dict)
    count: int = 0

    def add(self, results: Iterable[AssertionResult | Mapping[str, Any]]) -> None:
        self.count += 1
        for name, (s, w) in case_metrics(results).items():
            self.sums[name] = self.sums.get(name, 0.0) + s
            self.weights[name] = self.weights.get(name, 0.0) + w

    def averages(self) -> dict[str, float]:
        """Weighted mean score per metric (what a summary shows)."""
        return {k: (self.sums[k] / w if (w := self.weights.get(k, 0.0)) > 0 else 0.0) for k in sorted(self.sums)}

    def derived(self, defs: Sequence[DerivedMetric]) -> dict[str, float | None]:
        """Each derived metric over the totals and `__count`; None when it names an unknown metric."""
        env: dict[str, float] = {**self.sums, "__count": float(self.count)}
        out: dict[str, float | None] = {}
        for d in defs:
            try:
                evaluator = simpleeval.SimpleEval(operators=_OPERATORS, functions=_FUNCS, names=dict(env))
                value: float | None = float(evaluator.eval(d.source, previously_parsed=d.expr.body))
            except (simpleeval.InvalidExpression, ArithmeticError, ValueError, TypeError):
                value = None
            out[d.name] = value
            if value is not None:
                env[d.name] = value
        return out
