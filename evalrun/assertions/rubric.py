"""llm-rubric: a grader model judges the output against a free-text rubric (promptfoo's llm-rubric).

YAML keys: `value` = the rubric (required); `threshold` (optional: then pass also needs score >= threshold);
`provider` (grader); `rubricPrompt` (replaces the judge prompt; receives `output` (fenced), `rubric`, and the
case's vars; may render to a JSON list of chat messages). The grader replies {reason, pass, score}.
One grader call; needs an LLM grader (validate says so when the builtin grader would grade it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from evalrun.assertions.base import AssertionContext, Score
from evalrun.assertions.graded import GradedAssertion
from evalrun.assertions.registry import register
from evalrun.grading import schemas
from evalrun.grading.fence import block
from evalrun.grading.steps import judge_step


@dataclass(frozen=True)
class RubricReply:
    passed: bool
    score: float
    reason: str


def _parse(reply: dict[str, Any]) -> RubricReply:
    return RubricReply(bool(reply["pass"]), float(reply["score"]), str(reply["reason"]).strip())


RUBRIC = judge_step("judge", "rubric", schemas.rubric, _parse, ("output", "rubric"), "rubric verdict")


@register("llm-rubric")
class LLMRubric(GradedAssertion):
    """Pass/score from a grader judging the output against `value` (the rubric).

    YAML keys: `value` (required); `threshold` (optional); `provider`; `rubricPrompt` (step judge). One call.
    """

    summary = "a grader model judges the output against a rubric"
    grader_calls = 1
    requires_value = False  # required unless a rubricPrompt holds the rubric: config/checks.py checks per test
    uses_context = False
    config_keys = None  # promptfoo passes arbitrary config through to custom rubric prompts
    steps = ("judge",)
    judge_step = RUBRIC
    value_hint = "give the rubric as a string, e.g. `value: is polite and answers the question`"

    def parse(self, value: Any) -> str:
        if isinstance(value, (dict, list)):
            import json

            return json.dumps(value, ensure_ascii=False)
        if value is None:
            return ""  # the custom rubricPrompt holds the rubric
        if not str(value).strip():
            raise ValueError("llm-rubric needs a rubric in `value`")
        return str(value)

    async def evaluate(self, ctx: AssertionContext) -> Score:
        rubric = self.value_of(ctx)
        reply, trace = await self.ask(ctx, {"output": block("OUTPUT", ctx.output), "rubric": rubric})
        passed = reply.passed
        reason = reply.reason or ("passed" if passed else "failed")
        if self.threshold is not None:
            ok, comparison = self.verdict(reply.score)
            passed = passed and ok
            reason = f"{reason} ({comparison})"
        return self.score(passed, reply.score, reason, {"rubric": rubric}, trace)
