"""conversation-relevance (promptfoo's port of DeepEval's conversation relevancy): a grader judges, over a sliding
window of the conversation's turns, whether each turn's reply is relevant; score = relevant windows / windows."""

from __future__ import annotations

import json
from typing import Any

from evalrun.assertions.base import AssertionContext, Score
from evalrun.assertions.graded import GradedAssertion
from evalrun.assertions.registry import register
from evalrun.grading import schemas
from evalrun.grading.fence import block
from evalrun.grading.steps import Step, judge_step

RELEVANCE: Step[tuple[bool, str]] = judge_step(
    "judge", "conversation_relevance",
    lambda: schemas.obj({"verdict": {"type": "string", "enum": ["yes", "no"]}, "reason": {"type": "string"}}),
    lambda r: (r["verdict"] == "yes", str(r.get("reason") or "").strip()), ("messages",), "verdict")
EPSILON = 2.220446049250313e-16  # JavaScript's Number.EPSILON, as promptfoo compares


def turns(ctx: AssertionContext) -> list[tuple[str, str]]:
    """(user, assistant) turns: `vars._conversation` ([{input, output}]) when given and not empty, else the
    rendered prompt and this output."""
    history = ctx.vars.get("_conversation")
    if isinstance(history, list) and history:
        return [(_text(m.get("input")), _text(m.get("output"))) if isinstance(m, dict) else (_text(m), "")
                for m in history]
    return [(ctx.prompt, ctx.output)]


def _text(v: Any) -> str:
    return v if isinstance(v, str) else json.dumps(v, ensure_ascii=False, default=str)


@register("conversation-relevance")
class ConversationRelevance(GradedAssertion):
    """Share of conversation windows whose last reply the grader judges relevant is >= `threshold`.

    The turns are `vars._conversation` (a list of {input, output}) when the test gives one, else the prompt and
    this output; for each turn, the window of up to `config.windowSize` turns ending there is judged (one grader
    call each, yes/no). YAML keys: `threshold` (default 0.5); `config.windowSize` (default 5); score = relevant
    windows / windows (`not-`: 1 - score);
    """

    takes_value = False
    default_threshold = 0.5
    config_keys = frozenset({"windowSize"})
    steps = ("judge",)
    judge_step = RELEVANCE

    def check(self) -> None:
        super().check()
        size = self.spec.config.get("windowSize")
        if size is not None and (isinstance(size, bool) or not isinstance(size, int) or size < 1):
            raise self.error(f"config.windowSize must be a whole number >= 1, got {size!r}", key="config.windowSize")

    async def evaluate(self, ctx: AssertionContext) -> Score:
        size = int(ctx.config.get("windowSize") or 5)
        messages = turns(ctx)
        _, trace = self.grader_for(ctx)
        relevant, irrelevant = 0, []
        for i in range(len(messages)):
            window = messages[max(0, i - size + 1):i + 1]
            text = "\n\n".join(f"{block(f'USER {k + 1}', u)}\n\n{block(f'ASSISTANT {k + 1}', a)}"
                               for k, (u, a) in enumerate(window))
            ok, why = await self.step(ctx, RELEVANCE, {"messages": text}, trace)
            if ok:
                relevant += 1
            elif why:
                irrelevant.append(f"turn {i + 1}: {why}")
        score = relevant / len(messages)
        threshold = self.threshold if self.threshold is not None else 0.5
        passed = score >= threshold - EPSILON
        reason = f"{relevant} out of {len(messages)} conversation windows were relevant"
        if irrelevant:
            reason += "; " + "; ".join(irrelevant)
        return self.score(passed, score, reason, {"windows": len(messages), "relevant": relevant}, trace)
