"""Mastra's generateReason step: one more grader call that explains a computed score in prose.

Mastra's LLM scorers (answer-relevancy, bias, toxicity, prompt-alignment, answer-similarity, tool-call-accuracy's
LLM variant) end with a `generateReason` step: the judge is given the score and the judgements it was computed
from and writes "The score is X because ...". evalrun makes that call by default, as Mastra does, after the
score is computed (the score never depends on it); `config.generateReason: false` skips it and saves the call.
The reason is the start of the result's `reason` (the computed figures follow in parentheses) and is kept as
`details.reason`. A failed reason call is a GRADER ERROR like any other grader call.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from evalrun.grading import schemas
from evalrun.grading.fence import block
from evalrun.grading.steps import Step, ask, judge_step
from evalrun.types import GraderTrace

if TYPE_CHECKING:
    from evalrun.assertions.base import AssertionContext
    from evalrun.assertions.graded import GradedAssertion

#: The config key that turns the step off (Mastra has no such option: its scorers always explain).
KEY = "generateReason"

REASON: Step[str] = judge_step(
    "reason", "reason", lambda: schemas.obj({"reason": {"type": "string"}}),
    lambda r: " ".join(str(r["reason"]).split()),
    ("metric", "score", "scale", "direction", "about", "input", "output", "results"), "reason")


def wanted(config: Mapping[str, Any]) -> bool:
    """Whether the reason step runs (default true, as in Mastra)."""
    return config.get(KEY, True) is not False


def check(handler: GradedAssertion) -> None:
    """`config.generateReason` must be a boolean (a ConfigError at load time otherwise)."""
    v = handler.spec.config.get(KEY, True)
    if not isinstance(v, bool):
        raise handler.error(f"config.{KEY} must be true or false, got {v!r}", key=f"config.{KEY}",
                            hint="false skips Mastra's reason call (the reason line is then built from the "
                                 "judgements alone)")


async def explain(handler: GradedAssertion, ctx: AssertionContext, trace: GraderTrace, *, score: float,
                  scale: float, about: str, judgements: Any, input_text: str | None,
                  input_label: str = "INPUT") -> str:
    """Ask the grader to explain `score` from `judgements` (one call): the reason text."""
    direction = "lower is better" if handler.lower_is_better else "higher is better"
    variables = {
        "metric": handler.spec.type, "score": f"{score:g}", "scale": f"{scale:g}", "direction": direction,
        "about": about, "input": block(input_label, input_text) if input_text is not None else "",
        "output": block("OUTPUT", ctx.output),
        "results": block("JUDGEMENTS", json.dumps(judgements, ensure_ascii=False, indent=1)),
    }
    return await ask(ctx.grader(handler.spec), REASON, variables, trace,
                     override=handler.overrides(ctx).get(REASON.name), extra=ctx.vars)
