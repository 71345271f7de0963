"""assert-set: a group of assertions scored together, with its own threshold and weight."""

from __future__ import annotations

import dataclasses
from typing import Any

from evalrun.assertions.base import Assertion, AssertionContext, Score
from evalrun.assertions.registry import register
from evalrun.types import AssertionResult, AssertionSpec


@register("assert-set")
class AssertSet(Assertion):
    """Groups assertions: the set's score is the weighted mean of its children's scores.

    YAML keys: `assert` (required): the child assertions; `threshold` (optional): the set passes when its
    score >= threshold (otherwise when every child with weight > 0 passes); `weight` (default 1) and `metric`
    apply to the set as a whole. An ERROR in a child makes the set an ERROR.
    """

    summary = "group of assertions with its own threshold and weight"

    def check(self) -> None:
        if not self.spec.children:
            raise self.error("assert-set needs a non-empty `assert` list", key="assert")
        from evalrun.assertions.engine import build

        built = []
        for child in self.spec.children:
            handler = child.handler if isinstance(child.handler, Assertion) else build(child)
            built.append(dataclasses.replace(child, handler=handler) if child.handler is None else child)
        self.children: tuple[AssertionSpec, ...] = tuple(built)

    async def evaluate(self, ctx: AssertionContext) -> Score:
        import asyncio

        from evalrun.assertions.engine import combine, evaluate

        async def one(child: AssertionSpec) -> AssertionResult:
            if ctx.run_child is not None:
                res: Any = await ctx.run_child(child)
                return res
            return await evaluate(child, dataclasses.replace(ctx, value=child.value, config=child.config))

        results = list(await asyncio.gather(*(one(c) for c in self.children)))
        score, passed, reason = combine(results, self.spec.threshold)
        return Score(passed, score, reason, {"_children": results})
