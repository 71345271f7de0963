"""select-best, promptfoo's cross-output assertion. The runner runs the cases of such a test (same vars, every
provider x prompt) together (assertions/output_groups.py); the comparison is one grader call per group, whatever
the number of outputs, made by whichever case gets there first, and shared by all."""

from __future__ import annotations

from evalrun.assertions.base import AssertionContext, Score
from evalrun.assertions.graded import GradedAssertion
from evalrun.assertions.registry import register
from evalrun.errors import AssertionRuntimeError
from evalrun.grading import schemas
from evalrun.grading.fence import block, numbered
from evalrun.grading.steps import Step, ask, judge_step
from evalrun.types import GraderTrace

SELECT_BEST: Step[tuple[int, str]] = judge_step(
    "judge", "select_best",
    lambda n: schemas.obj({"best": {"type": "integer", "minimum": 0, "maximum": n - 1},
                           "reason": {"type": "string"}}),
    lambda r: (int(r["best"]), str(r["reason"]).strip()), ("criteria", "outputs", "n_outputs"), "choice")


@register("select-best")
class SelectBest(GradedAssertion):
    """The best of the test's outputs across providers and prompts, by the criteria in `value`, passes.

    YAML keys: `value` (criteria, required); `provider`; `rubricPrompt` (step judge). Score 1 for the chosen
    output, 0 for the others. One grader call per group of outputs (needs at least 2 outputs and an LLM grader).
    """

    grader_calls = 1
    requires_value = True
    uses_context = False
    compares_outputs = True
    config_keys = frozenset()
    steps = ("judge",)
    judge_step = SELECT_BEST
    value_hint = "give the criteria, e.g. `value: the most concise correct answer`"
    value_text = "the criteria"

    async def evaluate(self, ctx: AssertionContext) -> Score:
        # imported here: it imports asyncio, and validate imports every assertion module
        from evalrun.assertions.output_groups import CURRENT

        criteria = self.value_of(ctx)
        group = CURRENT.get()
        if group is None:
            raise AssertionRuntimeError("select-best compares the outputs of a test's providers and prompts: it "
                                        "runs in `evalrun eval`, not on a single output")
        grader, trace = self.grader_for(ctx)
        shared = GraderTrace(grader.id)

        async def compare(entries: list[tuple[str, str]]) -> tuple[int, str, list[str]]:
            if len(entries) < 2:
                raise AssertionRuntimeError(f"select-best needs at least 2 outputs to compare, got {len(entries)}")
            outputs = [out for _, out in entries]
            best, why = await ask(grader, SELECT_BEST, {
                "criteria": block("CRITERIA", criteria), "outputs": numbered("OUTPUT", outputs),
                "n_outputs": len(outputs)}, shared, schema_args=(len(outputs),),
                override=self.overrides(ctx).get("judge"), extra=ctx.vars)
            return best, why, [cid for cid, _ in entries]

        (best, why, ids), computed = await group.submit(self.spec.key_path or "select-best", ctx.case.id,
                                                        ctx.output, compare)
        if computed:
            trace.calls.extend(shared.calls)  # the grader call is counted once, on the case that made it
        mine = ids.index(ctx.case.id)
        passed = mine == best
        reason = (f"chosen as the best of {len(ids)} outputs: {why}" if passed
                  else f"output {best} of {len(ids)} was chosen instead: {why}")
        return self.score(passed, 1.0 if passed else 0.0, reason, {"chosen": best, "position": mine}, trace)
