"""A judge-style evalrun plugin: `is-polite`, as one handler, one template and one formula.

- the template: politeness.j2 next to this file (users can still replace it with `rubricPrompt`);
- the step: `POLITENESS`, a `judge_step` with the reply schema and the parser into a typed result;
- the formula: `politeness_score`, pure and tested on its own;
- the handler: `IsPolite`, which asks the step and scores the result.
Only the public API is imported (`evalrun.assertions`, `evalrun.grading`).
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources

from evalrun.assertions import AssertionContext, GradedAssertion, Score
from evalrun.grading import block, judge_step, schemas


@dataclass(frozen=True)
class Politeness:
    rating: int  # 1..5
    reason: str


POLITENESS = judge_step(
    "judge", "politeness",                                   # step name (rubricPrompt key), template name
    lambda: schemas.obj({"rating": {"type": "integer", "minimum": 1, "maximum": 5}, "reason": {"type": "string"}}),
    lambda r: Politeness(int(r["rating"]), str(r["reason"])),  # a valid reply -> typed result
    ("output",),                                             # the variables the template receives
    source=resources.files(__package__).joinpath("politeness.j2").read_text(encoding="utf-8"))


def politeness_score(p: Politeness) -> float:
    """The formula: rating 1..5 -> 0..1."""
    return (p.rating - 1) / 4


class IsPolite(GradedAssertion):
    """The grader rates the output's politeness 1-5; score = (rating - 1) / 4.

    YAML keys: `threshold` (default 0.5); `provider` (the grader); `rubricPrompt` (step judge). One grader
    call; needs an LLM grader (`validate` refuses the builtin grader).
    """

    summary = "the output is polite (LLM grader)"
    grader_calls = 1
    default_threshold = 0.5
    takes_value = False
    uses_context = False
    steps = ("judge",)
    judge_step = POLITENESS

    async def evaluate(self, ctx: AssertionContext) -> Score:
        p, trace = await self.ask(ctx, {"output": block("OUTPUT", ctx.output)})
        value = politeness_score(p)
        passed, comparison = self.verdict(value)
        return self.score(passed, value, f"rated {p.rating}/5: {p.reason} ({comparison})", {"rating": p.rating},
                          trace)
