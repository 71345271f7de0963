"""Response metadata assertions: latency, cost, finish-reason."""

from __future__ import annotations

from typing import Any

from evalrun.assertions.base import Assertion, AssertionContext, Score, binary
from evalrun.assertions.registry import register
from evalrun.errors import AssertionRuntimeError


class _Limit(Assertion):
    unit = ""
    takes_value = False

    def check(self) -> None:
        t = self.spec.threshold
        if t is None:
            raise self.error(f"{self.spec.type} needs a threshold", key="threshold",
                             hint=f"e.g. `threshold: {1000 if self.spec.type == 'latency' else 0.01}`")
        if t < 0:  # the loader has made it a number
            raise self.error(f"threshold must be a non-negative number, got {t!r}", key="threshold")

    def measure(self, ctx: AssertionContext) -> float:
        raise NotImplementedError

    async def evaluate(self, ctx: AssertionContext) -> Score:
        got = self.measure(ctx)
        limit = float(self.spec.threshold or 0)
        ok = got <= limit
        return binary(ok, f"{self.spec.type.capitalize()} {got:g}{self.unit} is "
                          f"{'<=' if ok else '>'} threshold {limit:g}{self.unit}")


@register("latency")
class Latency(_Limit):
    """Provider latency in milliseconds is at most `threshold`.

    YAML keys: `threshold` (required): milliseconds. A cached response has no latency: the assertion is an
    ERROR then (run with --no-cache).
    """

    unit = "ms"

    def measure(self, ctx: AssertionContext) -> float:
        if ctx.response.cached:
            raise AssertionRuntimeError("latency is unknown for a cached response; rerun with --no-cache")
        return ctx.response.latency_ms


@register("cost")
class Cost(_Limit):
    """Provider cost of the call (USD) is at most `threshold`.

    YAML keys: `threshold` (required): dollars. A provider that reports no cost makes it an ERROR.
    """

    def measure(self, ctx: AssertionContext) -> float:
        if ctx.response.cost is None:
            raise AssertionRuntimeError("the provider reported no cost for this call")
        return ctx.response.cost


@register("finish-reason")
class FinishReason(Assertion):
    """The provider's finish reason equals `value` (case-insensitive), e.g. `stop`, `length`, `tool_calls`.

    YAML keys: `value` (required): the expected reason. No reported reason fails the assertion.
    """

    requires_value = True

    def parse(self, value: Any) -> str:
        if not isinstance(value, str) or not value:
            raise ValueError(f"finish-reason needs a string value, got {value!r}")
        return value

    async def evaluate(self, ctx: AssertionContext) -> Score:
        want = self.value_of(ctx)
        got = ctx.response.finish_reason
        if not got:
            return binary(False, "Provider did not supply a finish reason")
        ok = got.lower() == want.lower()
        return binary(ok, f"Finish reason {got!r} {'equals' if ok else 'is not'} {want!r}")
