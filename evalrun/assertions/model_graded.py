"""promptfoo's model-graded types (llm-rubric, factuality, model-graded-closedqa, g-eval, select-best, classifier)
and select-best's output groups: the cases of a test that differ only by provider and prompt, run together."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterable, Iterator
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, ClassVar

from evalrun.assertions.base import Assertion, AssertionContext, Score
from evalrun.assertions.graded import GradedAssertion, mastra_input
from evalrun.assertions.registry import register
from evalrun.errors import AssertionRuntimeError, ConfigError, GraderError
from evalrun.grading import schemas
from evalrun.grading.fence import block, numbered
from evalrun.grading.steps import Step, ask, judge_step
from evalrun.types import AssertionSpec, Case, GraderTrace, TestSpec

if TYPE_CHECKING:
    import asyncio

FACT_OPTIONS = {"A": "subset", "B": "superset", "C": "agree", "D": "disagree", "E": "differButFactual"}
#: promptfoo's default score per factuality category (options.factuality overrides them).
FACT_SCORES = {"subset": 1.0, "superset": 1.0, "agree": 1.0, "disagree": 0.0, "differButFactual": 1.0}

FACTUALITY: Step[tuple[str, str]] = judge_step(
    "judge", "factuality", lambda: schemas.obj({"category": {"type": "string", "enum": list(FACT_OPTIONS)},
                                                "reason": {"type": "string"}}),
    lambda r: (str(r["category"]), str(r["reason"]).strip()), ("input", "ideal", "output"), "category")
CLOSEDQA: Step[tuple[bool, str]] = judge_step(
    "judge", "closedqa", lambda: schemas.obj({"reason": {"type": "string"},
                                              "answer": {"type": "string", "enum": ["Y", "N"]}}),
    lambda r: (r["answer"] == "Y", str(r["reason"]).strip()), ("input", "output", "criteria"), "Y/N")
GEVAL_STEPS: Step[list[str]] = judge_step(
    "steps", "geval_steps", lambda: schemas.strings("steps"),
    lambda r: [s.strip() for s in r["steps"] if s.strip()], ("criteria",), "evaluation steps")
GEVAL: Step[tuple[float, str]] = judge_step(
    "judge", "geval", lambda: schemas.obj({"score": {"type": "number", "minimum": 0, "maximum": 10},
                                           "reason": {"type": "string"}}),
    lambda r: (float(r["score"]), str(r["reason"]).strip()), ("criteria", "steps", "input", "output"), "score")


RUBRIC: Step[tuple[bool, float, str]] = judge_step(
    "judge", "rubric", schemas.rubric, lambda r: (bool(r["pass"]), float(r["score"]), str(r["reason"]).strip()),
    ("output", "rubric"), "rubric verdict")


class _Judged(GradedAssertion):
    requires_value = True
    config_keys = frozenset()
    steps: ClassVar[tuple[str, ...]] = ("judge",)


@register("factuality", "model-graded-factuality")
class Factuality(_Judged):
    """promptfoo's factuality: the grader places the output against the reference answer in `value`
    (A subset, B superset, C same details, D disagreement, E differences that don't matter).

    YAML keys: `value` (reference answer, required); test `options.factuality` {subset, superset, agree,
    disagree, differButFactual} = score per category (defaults 1, 1, 1, 0, 1); pass when the score > 0 (and
    >= `threshold` when given); 1 call;
    """

    judge_step = FACTUALITY
    value_hint = "give the reference answer, e.g. `value: Paris is the capital of France`"
    value_text = "the reference answer"

    async def evaluate(self, ctx: AssertionContext) -> Score:
        ideal = self.value_of(ctx)
        custom = ctx.case.test.options.get("factuality") or {}
        if not isinstance(custom, dict) or any(k not in FACT_SCORES for k in custom):
            raise AssertionRuntimeError("options.factuality takes " + ", ".join(FACT_SCORES))
        weights = {**FACT_SCORES, **{k: float(v) for k, v in custom.items()}}
        _, trace = self.grader_for(ctx)
        category, why = await self.step(ctx, FACTUALITY, {
            "input": block("QUESTION", mastra_input(ctx)), "ideal": block("EXPERT ANSWER", ideal),
            "output": block("SUBMITTED ANSWER", ctx.output)}, trace)
        score = weights[FACT_OPTIONS[category]]
        passed = score > 0 and (self.spec.threshold is None or score >= self.spec.threshold)
        reason = f"({category}) {FACT_OPTIONS[category]}: {why}" if why else f"({category}) {FACT_OPTIONS[category]}"
        return self.score(passed, score, reason, {"category": category, "ideal": ideal}, trace)


@register("model-graded-closedqa")
class ClosedQA(_Judged):
    """promptfoo's model-graded-closedqa: does the output meet the criterion in `value`? (Y/N)

    Score 1 or 0, 1 call. YAML keys: `value` (criterion, required);
    """

    judge_step = CLOSEDQA
    value_hint = "give the criterion, e.g. `value: mentions the refund policy`"
    value_text = "the criterion"

    async def evaluate(self, ctx: AssertionContext) -> Score:
        criteria = self.value_of(ctx)
        _, trace = self.grader_for(ctx)
        ok, why = await self.step(ctx, CLOSEDQA, {
            "input": block("TASK", mastra_input(ctx)), "output": block("SUBMISSION", ctx.output),
            "criteria": block("CRITERION", criteria)}, trace)
        return self.score(ok, 1.0 if ok else 0.0, why or ("meets" if ok else "does not meet"),
                          {"criteria": criteria}, trace)


@register("g-eval")
class GEval(_Judged):
    """promptfoo's g-eval: the grader writes evaluation steps for the criteria, then scores 0-10 by them.

    Score = grader score / 10, 2 calls. YAML keys: `value` (criteria, required); `threshold` (default 0.7);
    """

    default_threshold = 0.7
    value_text = "the criteria"
    value_hint = "give the criteria, e.g. `value: answers the question concisely and politely`"
    steps = ("judge", "steps")
    judge_step = GEVAL

    @classmethod
    def grading_steps(cls) -> tuple[Step[Any], ...]:
        return (GEVAL_STEPS, GEVAL)

    async def evaluate(self, ctx: AssertionContext) -> Score:
        criteria = self.value_of(ctx)
        _, trace = self.grader_for(ctx)
        plan = await self.step(ctx, GEVAL_STEPS, {"criteria": block("CRITERIA", criteria)}, trace)
        raw, why = await self.step(ctx, GEVAL, {
            "criteria": block("CRITERIA", criteria), "steps": plan, "input": block("INPUT", mastra_input(ctx)),
            "output": block("REPLY", ctx.output)}, trace)
        score = raw / 10.0
        passed, comparison = self.verdict(score)
        return self.score(passed, score, f"{why} ({comparison})" if why else comparison,
                          {"criteria": criteria, "steps": plan}, trace)


@register("llm-rubric")
class LLMRubric(GradedAssertion):
    """A grader model judges the output against a free-text rubric (promptfoo's llm-rubric): {reason, pass, score}.

    YAML keys: `value` = the rubric (required unless a rubricPrompt holds it); `threshold` (optional: then pass
    also needs score >= threshold); one call, whose rubricPrompt receives `output` (fenced), `rubric` and the
    case's vars, and may render to a JSON list of chat messages;
    """

    requires_value = False  # required unless a rubricPrompt holds the rubric: config/checks.py checks per test
    config_keys = None  # promptfoo passes arbitrary config through to custom rubric prompts
    steps = ("judge",)
    judge_step = RUBRIC
    value_hint = "give the rubric as a string, e.g. `value: is polite and answers the question`"

    def parse(self, value: Any) -> str:
        if isinstance(value, (dict, list)):
            return json.dumps(value, ensure_ascii=False)
        if value is None:
            return ""  # the custom rubricPrompt holds the rubric
        if not str(value).strip():
            raise ValueError("llm-rubric needs a rubric in `value`")
        return str(value)

    async def evaluate(self, ctx: AssertionContext) -> Score:
        rubric = self.value_of(ctx)
        (passed, score, reason), trace = await self.ask(ctx, {"output": block("OUTPUT", ctx.output),
                                                              "rubric": rubric})
        reason = reason or ("passed" if passed else "failed")
        if self.threshold is not None:
            ok, comparison = self.verdict(score)
            passed = passed and ok
            reason = f"{reason} ({comparison})"
        return self.score(passed, score, reason, {"rubric": rubric}, trace)


CURRENT: ContextVar[OutputGroup | None] = ContextVar("evalrun_output_group", default=None)


class _Slot:
    """One cross-output assertion (by its key path) within one group."""

    def __init__(self) -> None:
        import asyncio  # here: `validate` imports every assertion module and never needs the event loop
        self.entries: list[tuple[str, Any]] = []  # (case id, output or what the assertion compares), in order
        self.ready = asyncio.Event()
        self.result: asyncio.Future[Any] | None = None  # the comparison, started by the first case past `ready`
        self.computed_by: str | None = None


class OutputGroup:
    def __init__(self, case_ids: Iterable[str]) -> None:
        self.order = list(case_ids)  # promptfoo's order: provider x prompt
        self._done: set[str] = set()
        self._slots: dict[str, _Slot] = {}

    def _check(self, slot: _Slot) -> None:
        submitted = {cid for cid, _ in slot.entries}
        if all(cid in submitted or cid in self._done for cid in self.order):
            slot.ready.set()

    def case_done(self, case_id: str) -> None:
        """A case of the group ended (whatever its status)."""
        self._done.add(case_id)
        for slot in self._slots.values():
            self._check(slot)

    async def submit(self, key: str, case_id: str, output: Any,
                     compute: Callable[[list[tuple[str, Any]]], Awaitable[Any]]) -> tuple[Any, bool]:
        """Add this case's output (or what `key` compares, e.g. max-score's aggregate) for assertion `key`, wait
        for the group, and return (the comparison's result,
        whether this case computed it). `compute(entries)` runs once per group and assertion."""
        import asyncio
        slot = self._slots.setdefault(key, _Slot())
        slot.entries.append((case_id, output))
        self._check(slot)
        await slot.ready.wait()
        if slot.result is None:
            entries = sorted(slot.entries, key=lambda e: self.order.index(e[0]))
            slot.result, slot.computed_by = asyncio.ensure_future(compute(entries)), case_id
        # every member of the group gets the same result or error; shielded: one member's cancellation ends no other's
        return await asyncio.shield(slot.result), slot.computed_by == case_id


def compares_outputs(test: TestSpec) -> bool:
    """The test holds an assertion that compares the outputs of its providers/prompts (select-best, max-score)."""
    return _any_compares(test.asserts)


def _any_compares(specs: Iterable[AssertionSpec]) -> bool:
    for s in specs:  # a plain loop: this runs once per case
        if getattr(s.handler, "compares_outputs", False) or (s.children and _any_compares(s.children)):
            return True
    return False


def group_key(case: Case) -> tuple[int, str, int]:
    """What the cases of one output group share: their test, vars and repeat."""
    return case.test.index, json.dumps(case.vars, sort_keys=True, default=str), case.repeat


def batches(stream: Iterable[Case]) -> Iterator[Case | list[Case]]:
    """The case stream with each group of a test that compares outputs as one list (groups are contiguous)."""
    pending: list[Case] = []
    for case in stream:
        if pending and group_key(pending[0]) != group_key(case):
            yield pending
            pending = []
        if compares_outputs(case.test):
            pending.append(case)
        else:
            yield case
    if pending:
        yield pending


SELECT_BEST: Step[tuple[int, str]] = judge_step(
    "judge", "select_best",
    lambda n: schemas.obj({"best": {"type": "integer", "minimum": 0, "maximum": n - 1},
                           "reason": {"type": "string"}}),
    lambda r: (int(r["best"]), str(r["reason"]).strip()), ("criteria", "outputs", "n_outputs"), "choice")


@register("select-best")
class SelectBest(_Judged):
    """The best of the test's outputs across providers and prompts, by the criteria in `value`, passes.

    Score 1 for the chosen output, 0 for the others; one grader call per group of outputs (needs at least 2
    outputs and an LLM grader). YAML keys: `value` (criteria, required);
    """

    compares_outputs = True
    judge_step = SELECT_BEST
    value_hint = "give the criteria, e.g. `value: the most concise correct answer`"
    value_text = "the criteria"

    async def evaluate(self, ctx: AssertionContext) -> Score:
        criteria = self.value_of(ctx)
        group = CURRENT.get()
        if group is None:
            raise AssertionRuntimeError("select-best compares the outputs of a test's providers and prompts: it "
                                        "runs in `evalrun eval`, not on a single output")
        grader, trace = self.grader_for(ctx)
        shared = GraderTrace(grader.id)

        async def compare(entries: list[tuple[str, Any]]) -> tuple[int, str, list[str]]:
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


EPSILON = 2.220446049250313e-16  # JavaScript's Number.EPSILON, as promptfoo compares


@register("classifier")
class Classifier(Assertion):
    """promptfoo's classifier: a classification model's score for class `value` must be >= `threshold`.

    Without `value`, the highest class score counts. YAML keys: `value` (optional): the expected class label, as
    the model names it (e.g. `POSITIVE`, `toxic`); `threshold` (default 1, as in promptfoo: set it, e.g. 0.5);
    `provider`: the classifier, e.g. `huggingface:text-classification:distilbert-base-uncased-finetuned-sst-2-english`
    (`config: {apiEndpoint, apiKey}`), `huggingface:token-classification:MODEL`, or `file://classify.py` with
    `call_classification_api(prompt, options)`; else the test's `options.provider.classification`. Score = that
    class's score (0 when the class is absent); `not-` passes below the threshold and reports 1 - score. One
    classification request, no grader call.
    """

    default_threshold = 1.0
    config_keys = frozenset()
    value_hint = "give the expected class label as a string, or omit `value` to use the highest class score"

    def parse(self, value: Any) -> str | None:
        if value is None:
            return None
        if not isinstance(value, str) or not value.strip():
            raise ValueError('"classifier" assertion type must have a string value or be undefined')
        return value

    def check(self) -> None:
        super().check()
        from evalrun.grading.classifiers import candidate, check_config
        try:  # the assertion's own provider must be a classifier (a typo is a config error at load time)
            found = candidate(self.spec.provider, self.base_dir, own=True)
            if found is not None:
                check_config(found)
        except ConfigError as e:
            raise self.error(e.message, key="provider", hint=e.hint) from None

    async def evaluate(self, ctx: AssertionContext) -> Score:
        from evalrun.grading import classifiers
        expected = self.value_of(ctx)
        found = classifiers.classifier_spec(self.spec, ctx.case.test, self.base_dir)
        if found is None:
            raise GraderError(f"classifier needs a classification provider and none is configured; "
                              f"{classifiers.HINT}")
        scores = await classifiers.classify(found, ctx.output)
        if not scores:
            raise GraderError(f"{found.id}: no classification scores returned")
        score = max(scores.values()) if expected is None else scores.get(expected, 0.0)
        thr = self.threshold or 0.0
        passed = score >= thr - EPSILON
        subject = "Maximum classification score" if expected is None else f"Classification {expected} has score"
        reason = f"{subject} {score:.2f} {'>=' if passed else '<'} {thr:g}"
        if expected is not None and expected not in scores:
            reason += f" (the classifier returned no class {expected!r}; its classes: {', '.join(sorted(scores))})"
        return Score(passed, score, reason, {"classifier": found.id, "classification": scores})
