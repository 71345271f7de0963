"""Specs -> handlers -> AssertionResults (an error is never inverted by `not-`), `assert-set`, and promptfoo's
aggregation of results per test (`combine`) and per named metric (`metric:`, `derivedMetrics`)."""

from __future__ import annotations

import ast
import dataclasses
import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import simpleeval

from evalrun.assertions import registry
from evalrun.assertions.base import Assertion, AssertionContext, Score
from evalrun.assertions.registry import register
from evalrun.errors import AssertionRuntimeError, ConfigError, EvalrunError, GraderError, Location, labelled
from evalrun.types import NO_TOKENS, AssertionResult, AssertionSpec, Status, TestSpec


def build(spec: AssertionSpec) -> Assertion:
    """Look up spec.type in the registry and construct its handler (which validates its arguments)."""
    cls = registry.get(spec.type)
    if cls is None:
        from evalrun.errors import did_you_mean
        names = registry.names()
        typed = spec.full_type
        hint = did_you_mean(typed, names + [f"not-{n}" for n in names])
        raise ConfigError.at(spec.loc, f"unknown assertion type {typed!r}",
                             key=f"{spec.key_path}.type" if spec.key_path else "type",
                             hint=hint or "run `evalrun list` to see every assertion type")
    return cls(spec)


def output_text(value: Any) -> str:
    """A transformed output as text: strings unchanged, other values as compact JSON (like JSON.stringify)."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)
    except (TypeError, ValueError):  # a circular structure
        return str(value)


async def evaluate(spec: AssertionSpec, ctx: AssertionContext) -> AssertionResult:
    """Run one assertion for one case: transform, handler, `not-`, weight, metric; errors become result.error."""
    handler = spec.handler if isinstance(spec.handler, Assertion) else build(spec)  # built by the loader
    try:
        if handler.transform_fn is not None:
            transformed = await handler.transform_fn.call(ctx.code_output, ctx.as_dict())
            ctx = dataclasses.replace(ctx, output=output_text(transformed),
                                      output_value=None if isinstance(transformed, str) else transformed)
        if handler.value_script is not None:
            ctx = dataclasses.replace(ctx, value=_script_value(spec, await handler.value_script.call(
                ctx.code_output, ctx.as_dict())))
        score = await handler.evaluate(ctx)
    except Exception as e:  # noqa: BLE001 - one broken assertion must not end the run
        return _failed(spec, handler.threshold, e)
    return _result(spec, handler.threshold, score, _metric(spec, ctx.vars), handler.lower_is_better)


def _script_value(spec: AssertionSpec, value: Any) -> Any:
    """What a `value: file://script` returned, as the value of a type that is not code (promptfoo's rules)."""
    if isinstance(value, bool) or (isinstance(value, dict) and "pass" in value):
        what = "a boolean" if isinstance(value, bool) else "a grading result"
        raise AssertionRuntimeError(f"the script of {spec.full_type}'s value returned {what}: only javascript and "
                                    "python assertions take one; return the value itself (text, number, list or "
                                    "mapping)")
    return value


#: longest value kept in a result's `value` (the name of an assertion without a `metric`)
VALUE_LABEL_CHARS = 40


def value_label(value: Any) -> str | None:
    """An assertion's value as written, on one line and at most VALUE_LABEL_CHARS long; None when it has none."""
    if value is None:
        return None
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str,
                                                             separators=(",", ":"))
    text = " ".join(text.split())
    return text if len(text) <= VALUE_LABEL_CHARS else text[:VALUE_LABEL_CHARS - 1].rstrip() + "…"


def _failed(spec: AssertionSpec, threshold: float | None, e: Exception) -> AssertionResult:
    """The ERROR result of an assertion that raised `e` (in the `except` block): one short line as the message,
    the whole of it in `details.error_detail`."""
    from evalrun.errors import one_line
    details: dict[str, Any] = {}
    if isinstance(e, GraderError):
        message = f"grader error: {e}"
        if e.raw is not None:
            details["raw_replies"] = [e.raw]
    elif isinstance(e, (AssertionRuntimeError, EvalrunError)):
        message = str(e)
    else:
        import traceback  # only for a handler that raised (not at every start-up)
        message = f"{type(e).__name__}: {e}"
        details["traceback"] = traceback.format_exc()
    short = one_line(message)
    if short != message:
        details["error_detail"] = message
    return AssertionResult(type=spec.full_type, pass_=False, score=None, threshold=threshold,
                           weight=spec.weight, reason=short, metric=spec.metric, error=short, details=details,
                           value=value_label(spec.value))


def _metric(spec: AssertionSpec, vars: dict[str, Any]) -> str | None:
    """The metric name, rendered with the case's vars when it is a template (as promptfoo does)."""
    if not spec.metric or ("{{" not in spec.metric and "{%" not in spec.metric):
        return spec.metric
    from evalrun import templating
    try:
        return templating.render(spec.metric, vars)
    except Exception:  # noqa: BLE001 - an unrenderable name is reported as written
        return spec.metric


def _result(spec: AssertionSpec, threshold: float | None, s: Score, metric: str | None,
            lower: bool = False) -> AssertionResult:
    """`lower`: the handler's `lower_is_better` (kept on the result unless negated)."""
    passed, value = s.pass_, s.score
    if spec.negate:
        passed = not passed
        if value is not None and not (s.keep_score_on_negate or lower):
            value = 1.0 - value
    lower = lower and not spec.negate
    details = dict(s.details)
    grader, tokens, cost = None, NO_TOKENS, 0.0
    if s.trace is not None:
        grader, tokens, cost = s.trace.grader, s.trace.tokens, s.trace.cost
        details["calls"] = [{"step": c.step, "cached": c.cached, "latency_ms": c.latency_ms, "cost": c.cost,
                             "tokens": dataclasses.asdict(c.tokens)} for c in s.trace.calls]
        details["raw_replies"] = [c.raw for c in s.trace.calls]
    if spec.calibration is not None:  # the threshold came from a calibration file (config/calibration.py)
        c = spec.calibration
        details["threshold_source"] = {"file": c.file, "metric": c.metric, "threshold": c.threshold,
                                       "oof_balanced_accuracy": c.figure, "n": c.n, "grader": c.grader.get("id")}
    children: tuple[AssertionResult, ...] = tuple(details.pop("_children", ()))
    failed = next((c for c in children if c.error), None)
    error = None if failed is None else labelled(failed.type, failed.error or "")
    if error:  # an ERROR inside an assert-set is never turned into a pass or fail
        passed, value = False, None
    return AssertionResult(type=spec.full_type, pass_=passed, score=value, threshold=threshold,
                           weight=spec.weight, reason=error or s.reason, metric=metric, error=error,
                           details=details, grader=grader, tokens=tokens, cost=cost, children=children,
                           lower_is_better=lower, value=value_label(spec.value))


def aggregate(test: TestSpec, results: Sequence[AssertionResult]) -> tuple[Status, bool, float | None, str]:
    """Test-level verdict from its assertion results (promptfoo's AssertionsResult rules, see `combine`): any
    error -> status "error"; no assertions -> a pass with score 1."""
    if not results:
        return "pass", True, 1.0, "No assertions"
    score, passed, reason = combine(results, test.threshold)
    for r in results:
        if r.error:
            return "error", False, score, labelled(r.type, r.error)
    return ("pass" if passed else "fail"), passed, score, reason


def oriented(r: AssertionResult) -> float:
    """The result's score as it enters a case score: higher is better (a lower-is-better metric such as
    noise-sensitivity enters as 1 - score); an error or a missing score counts 0."""
    if r.error or r.score is None:
        return 0.0
    return 1.0 - r.score if r.lower_is_better else r.score


def combine(results: Sequence[AssertionResult], threshold: float | None) -> tuple[float, bool, str]:
    """Weighted score, pass and reason of a group of results (a test, or an assert-set's children).
    score = sum(score * weight) / sum(weight) (0 when the weights sum to 0), higher is better (a lower-is-better
    metric counts as 1 - score); an error counts as 0; a result with no score and no error (a graded assertion
    on an output that made no claims) is left out. pass = no result with weight > 0 failed, or, with a
    threshold (0 included), score >= threshold. When no result has a score, the score is 1.0 if every result
    passed (else 0.0) and the threshold is not applied.
    """
    scored: list[AssertionResult] = []
    scale: float | None = None
    last_failed = None
    for r in results:  # one pass: the scored results, their largest weight (as max() finds it), the last failure
        if r.score is not None or r.error:
            scored.append(r)
            if scale is None or r.weight > scale:
                scale = r.weight
        if not r.pass_ and (r.weight > 0 or r.error):
            last_failed = r
    scale = scale or 1.0  # weights <= 1: their sum cannot overflow
    total = sum([oriented(r) * (r.weight / scale) for r in scored])
    weight = sum([r.weight / scale for r in scored])
    passed = last_failed is None
    reason = "All assertions passed" if last_failed is None else last_failed.reason
    if not scored:
        return (1.0 if passed else 0.0), passed, reason
    score = total / weight if weight > 0 else 0.0
    if not math.isfinite(score):  # a score of inf/NaN from user code: never a PASS
        return score, False, f"Aggregate score {score} is not a finite number"
    if threshold is not None:
        passed = score >= threshold
        sign = "≥" if passed else "<"
        reason = f"Aggregate score {score:.2f} {sign} {threshold} threshold"
    return score, passed, reason


@register("assert-set")
class AssertSet(Assertion):
    """Groups assertions: the set's score is the weighted mean of its children's scores.

    YAML keys: `assert` (required): the child assertions; `threshold` (optional): the set passes when its
    score >= threshold (otherwise when every child with weight > 0 passes); `weight` (default 1) and `metric`
    apply to the set as a whole. An ERROR in a child makes the set an ERROR.
    """

    def check(self) -> None:
        if not self.spec.children:
            raise self.error("assert-set needs a non-empty `assert` list", key="assert")
        self.children: tuple[AssertionSpec, ...] = tuple(
            c if isinstance(c.handler, Assertion) else dataclasses.replace(c, handler=build(c)) for c in self.spec.children)

    async def evaluate(self, ctx: AssertionContext) -> Score:
        import asyncio  # here: validate imports every assertion module and never needs it

        async def one(child: AssertionSpec) -> AssertionResult:
            if ctx.run_child is not None:
                res: Any = await ctx.run_child(child)
                return res
            return await evaluate(child, dataclasses.replace(ctx, value=child.value, config=child.config))
        results = list(await asyncio.gather(*(one(c) for c in self.children)))
        score, passed, reason = combine(results, self.spec.threshold)
        return Score(passed, score, reason, {"_children": results})


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
