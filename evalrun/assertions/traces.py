"""Assertions on the trace a provider returns with its output (promptfoo's trace-span-count, trace-span-duration,
trace-error-spans). A provider returns it as `trace: {spans: [...]}` beside `output` (or in `metadata.trace`);
each span has `name`, and may have `startTime` / `endTime` (ms), `statusCode`, `statusMessage`, `attributes`."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from evalrun.assertions.base import Assertion, AssertionContext, Score, binary
from evalrun.assertions.registry import register
from evalrun.errors import AssertionRuntimeError

NO_TRACE = ("No trace data available for {type} assertion: the provider {provider} returned no trace; a script "
            "provider returns `trace: {{spans: [{{name, startTime, endTime, statusCode, attributes}}]}}` beside "
            "`output` (or in `metadata.trace`)")
_ERROR_WORDS = re.compile(r"error|failed|failure|exception|timeout|abort", re.I)


def spans_of(ctx: AssertionContext, type_name: str) -> list[dict[str, Any]]:
    """The spans of the trace the provider returned, or an ERROR saying there is none."""
    raw = ctx.response.raw
    trace = raw.get("trace") if isinstance(raw, dict) else None
    if trace is None:
        trace = ctx.response.metadata.get("trace")
    spans = trace.get("spans") if isinstance(trace, dict) else None
    if not isinstance(spans, list):
        raise AssertionRuntimeError(NO_TRACE.format(type=type_name, provider=ctx.case.provider.id))
    return [s for s in spans if isinstance(s, dict)]


def matches(name: Any, pattern: str) -> bool:
    """promptfoo's span-name glob: `*` any run, `?` one character, the whole name, ignoring case."""
    rx = re.escape(pattern).replace(r"\*", ".*").replace(r"\?", ".")
    return re.fullmatch(rx, str(name), re.I | re.S) is not None


def is_error_span(span: Mapping[str, Any]) -> bool:
    """promptfoo's isErrorSpan: status code 2 (OTel ERROR) or >= 400, an error-like attribute (`error`,
    `exception`, `failed`, `failure` true or an object; `http.status_code` >= 400; `otel.status_code` /
    `status.code` ERROR), or a status message that mentions an error, failure, exception, timeout or abort."""
    code = span.get("statusCode")
    if isinstance(code, (int, float)) and not isinstance(code, bool) and (code == 2 or code >= 400):
        return True
    attrs = span.get("attributes")
    if isinstance(attrs, dict):
        for key in ("error", "exception", "failed", "failure"):
            v = attrs.get(key)
            if v is True or v == "true" or isinstance(v, (dict, list)):
                return True
        http = attrs.get("http.status_code")
        try:
            if http is not None and not isinstance(http, bool) and float(http) >= 400:
                return True
        except (TypeError, ValueError):
            pass
        if "ERROR" in (attrs.get("otel.status_code"), attrs.get("status.code")):
            return True
    message = span.get("statusMessage")
    return bool(message) and _ERROR_WORDS.search(str(message)) is not None


def percentile(durations: list[float], p: float) -> float:
    """The nearest-rank percentile (promptfoo's calculatePercentile)."""
    ordered = sorted(durations)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)] if ordered else 0.0


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _ms(v: float) -> str:
    return f"{v:g}ms"


class _Trace(Assertion):
    requires_value = True
    config_keys = frozenset()
    keys: frozenset[str] = frozenset()

    def mapping(self, value: Any) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise ValueError(f"{self.spec.type} needs a mapping value ({', '.join(sorted(self.keys))}), got {value!r}")
        unknown = sorted(set(value) - self.keys)
        if unknown:
            raise ValueError(f"{self.spec.type}: unknown key(s) {', '.join(unknown)} (allowed: "
                             f"{', '.join(sorted(self.keys))})")
        for k, v in value.items():
            if k != "pattern" and v is not None and not (_number(v) and v >= 0):
                raise ValueError(f"{self.spec.type}: {k} must be a non-negative number, got {v!r}")
        if "pattern" in value and not isinstance(value["pattern"], str):
            raise ValueError(f"{self.spec.type}: pattern must be a string (a glob: * and ?), got {value['pattern']!r}")
        return value


@register("trace-span-count")
class TraceSpanCount(_Trace):
    """The number of spans whose name matches `value.pattern` is within `min` / `max` (inclusive).

    YAML keys: `value` (required): `{pattern: GLOB (required; * and ?, whole name, any case), min, max}`.
    Score 1/0. No trace from the provider is an ERROR.
    """

    keys = frozenset({"pattern", "min", "max"})
    value_hint = "e.g. `value: {pattern: 'retrieve*', min: 1, max: 3}`"

    def parse(self, value: Any) -> dict[str, Any]:
        v = self.mapping(value)
        if not v.get("pattern"):
            raise ValueError("trace-span-count assertion must have a value object with pattern property")
        return v

    async def evaluate(self, ctx: AssertionContext) -> Score:
        v = self.value_of(ctx)
        pattern, lo, hi = v["pattern"], v.get("min"), v.get("max")
        found = [s for s in spans_of(ctx, self.spec.type) if matches(s.get("name"), pattern)]
        n = len(found)
        head = f'Found {n} spans matching pattern "{pattern}"'
        if lo is not None and n < lo:
            ok, reason = False, f"{head}, expected at least {lo:g}"
        elif hi is not None and n > hi:
            ok, reason = False, f"{head}, expected at most {hi:g}"
        else:
            bounds = (f" (expected {lo:g}-{hi:g})" if lo is not None and hi is not None else
                      f" (expected at least {lo:g})" if lo is not None else
                      f" (expected at most {hi:g})" if hi is not None else "")
            ok, reason = True, head + bounds
        if found:
            reason += ". Matched spans: " + ", ".join(dict.fromkeys(str(s.get("name")) for s in found))
        return binary(ok, reason, count=n)


@register("trace-span-duration")
class TraceSpanDuration(_Trace):
    """Spans whose name matches `value.pattern` took at most `value.max` ms (each, or at `value.percentile`).

    YAML keys: `value` (required): `{max: ms (required), pattern: GLOB (default *), percentile: 0-100
    (optional: the nearest-rank percentile of the durations is compared instead of each)}`. Duration =
    endTime - startTime; spans without both are skipped (none left: a pass). Score 1/0. No trace is an ERROR.
    """

    keys = frozenset({"pattern", "max", "percentile"})
    value_hint = "e.g. `value: {pattern: 'llm.*', max: 1000, percentile: 95}`"

    def parse(self, value: Any) -> dict[str, Any]:
        v = self.mapping(value)
        if not _number(v.get("max")):
            raise ValueError("trace-span-duration assertion must have a value object with max property")
        if v.get("percentile") is not None and v["percentile"] > 100:
            raise ValueError(f"trace-span-duration: percentile must be from 0 to 100, got {v['percentile']!r}")
        return v

    async def evaluate(self, ctx: AssertionContext) -> Score:
        v = self.value_of(ctx)
        pattern, limit, pct = v.get("pattern") or "*", float(v["max"]), v.get("percentile")
        timed = [(str(s.get("name")), float(s["endTime"]) - float(s["startTime"]))
                 for s in spans_of(ctx, self.spec.type) if matches(s.get("name"), pattern)
                 and _number(s.get("startTime")) and _number(s.get("endTime"))]
        if not timed:
            return binary(True, f'No spans found matching pattern "{pattern}" with complete timing data')
        slowest = sorted(timed, key=lambda t: -t[1])
        if pct is None:
            slow = [t for t in slowest if t[1] > limit]
            if slow:
                return binary(False, f"{len(slow)} span(s) exceed duration threshold {_ms(limit)}. Slowest: "
                                     + ", ".join(f"{n} ({_ms(d)})" for n, d in slow[:3]))
            return binary(True, f'All {len(timed)} spans matching pattern "{pattern}" completed within '
                                f"{_ms(limit)} (max: {_ms(slowest[0][1])})")
        value = percentile([d for _, d in timed], pct)
        if value > limit:
            return binary(False, f"{pct:g}th percentile duration ({_ms(value)}) exceeds threshold {_ms(limit)}. "
                                 "Slowest spans: " + ", ".join(f"{n} ({_ms(d)})" for n, d in slowest[:3]
                                                              if d >= value), percentile=value)
        return binary(True, f"{pct:g}th percentile duration ({_ms(value)}) is within threshold {_ms(limit)}",
                      percentile=value)


@register("trace-error-spans")
class TraceErrorSpans(_Trace):
    """Spans in error among those whose name matches the pattern are at most `max_count` (or `max_percentage`).

    A span is in error with status code 2 or >= 400, an error-like attribute (`error`, `exception`, `failed`,
    `failure`, `http.status_code` >= 400, `otel.status_code: ERROR`) or a status message naming an error,
    failure, exception, timeout or abort. YAML keys: `value` (optional): a number (max_count), or `{max_count,
    max_percentage (0-100), pattern: GLOB (default *)}`; without a limit, max_count 0. No matching span: a
    pass. Score 1/0. No trace is an ERROR.
    """

    requires_value = False
    keys = frozenset({"pattern", "max_count", "max_percentage"})
    value_hint = "e.g. `value: 0`, or `value: {pattern: 'api.*', max_percentage: 5}`"

    def parse(self, value: Any) -> dict[str, Any]:
        if value is None:
            return {}
        if _number(value):
            if value < 0:
                raise ValueError(f"trace-error-spans: the maximum count must be non-negative, got {value!r}")
            return {"max_count": value}
        return self.mapping(value)

    async def evaluate(self, ctx: AssertionContext) -> Score:
        v = self.value_of(ctx)
        pattern, most, share = v.get("pattern") or "*", v.get("max_count"), v.get("max_percentage")
        if most is None and share is None:
            most = 0
        found = [s for s in spans_of(ctx, self.spec.type) if matches(s.get("name"), pattern)]
        if not found:
            return binary(True, f'No spans found matching pattern "{pattern}"')
        errors = [s for s in found if is_error_span(s)]
        pct = len(errors) / len(found) * 100
        if most is not None and len(errors) > most:
            shown = [f"{s.get('name')} ({s['statusMessage']})" if s.get("statusMessage") else
                     f"{s.get('name')} (status: {s['statusCode']})" if s.get("statusCode") else str(s.get("name"))
                     for s in errors[:3]]
            more = f" and {len(errors) - 3} more" if len(errors) > 3 else ""
            return binary(False, f"Found {len(errors)} error spans, expected at most {most:g}. Errors: "
                                 f"{', '.join(shown)}{more}", errors=len(errors))
        if share is not None and pct > share:
            return binary(False, f"Error rate {pct:.1f}% exceeds threshold {share:g}% ({len(errors)} errors out "
                                 f"of {len(found)} spans)", errors=len(errors))
        if not errors:
            return binary(True, f'No errors found in {len(found)} spans matching pattern "{pattern}"', errors=0)
        reason = f"Found {len(errors)} error(s) in {len(found)} spans ({pct:.1f}%)"
        reason += f", within threshold of {most:g}" if most is not None else ""
        reason += f", within threshold of {share:g}%" if share is not None else ""
        return binary(True, reason, errors=len(errors))
