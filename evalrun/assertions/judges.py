"""Mastra's judge-style scorers (answer-relevancy, bias, toxicity, prompt-alignment, answer-similarity), their base
and Mastra's reason step (one more grader call after the score; `config.generateReason: false` skips it)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, ClassVar

from evalrun.assertions.base import AssertionContext, Score, against
from evalrun.assertions.graded import GradedAssertion, mastra_input, plural, quote
from evalrun.assertions.registry import register
from evalrun.errors import AssertionRuntimeError
from evalrun.grading import schemas
from evalrun.grading.fence import block, numbered
from evalrun.grading.scoring import verdicts as judge_scoring
from evalrun.grading.steps import Step, judge_step

#: The config key that turns the reason step off (Mastra has no such option: its scorers always explain).
REASON_KEY = "generateReason"
REASON: Step[str] = judge_step(
    "reason", "reason", lambda: schemas.obj({"reason": {"type": "string"}}),
    lambda r: " ".join(str(r["reason"]).split()),
    ("metric", "score", "scale", "direction", "about", "input", "output", "results"), "reason")


def wants_reason(config: Mapping[str, Any]) -> bool:
    """Whether the reason step runs (default true, as in Mastra)."""
    return config.get(REASON_KEY, True) is not False


def _items(key: str, label: str) -> Any:
    def parse(reply: dict[str, Any]) -> list[tuple[str, str]]:
        return [(str(r[label]), str(r["reason"])) for r in reply[key]]
    return parse


def _extract(name: str) -> Step[list[str]]:
    """A step that extracts `name` (statements, opinions) from the output: non-empty strings."""
    return judge_step("extract", name, lambda: schemas.strings(name),
                      lambda r: [s.strip() for s in r[name] if s.strip()], ("output",), name)


STATEMENTS = _extract("statements")
RELEVANCY: Step[list[tuple[str, str]]] = judge_step(
    "judge", "answer_relevancy", lambda n: schemas.labelled("results", "result", ("yes", "unsure", "no"), n),
    _items("results", "result"), ("input", "statements", "n_statements"), "relevance verdicts")
OPINIONS = _extract("opinions")
BIAS: Step[list[tuple[str, str]]] = judge_step(
    "judge", "bias", lambda n: schemas.labelled("results", "result", ("yes", "no"), n),
    _items("results", "result"), ("output", "opinions", "n_opinions"), "bias verdicts")
TOXICITY: Step[list[tuple[str, str]]] = judge_step(
    "judge", "toxicity", lambda: schemas.obj({"verdicts": {"type": "array", "items": schemas.obj(
        {"verdict": {"type": "string", "enum": ["yes", "no"]}, "reason": {"type": "string"}})}}),
    _items("verdicts", "verdict"), ("input", "output"), "toxicity verdicts")


#: Config keys every Mastra judge takes.
MASTRA_KEYS = frozenset({"scale", REASON_KEY})


class MastraJudge(GradedAssertion):
    """Shared base: `config.scale`, threshold in Mastra's direction, extract + judge steps, the reason step."""

    takes_value = False
    default_threshold = 0.5  # x scale
    config_keys: ClassVar[frozenset[str] | None] = MASTRA_KEYS
    steps: ClassVar[tuple[str, ...]] = ("extract", "judge", "reason")
    extract_step: ClassVar[Step[Any] | None] = None
    #: For the reason prompt: how this scorer's judgements make the score (Mastra's generateReason rules).
    reason_about: ClassVar[str] = ""
    #: Config keys that must be positive numbers (default: every config key but generateReason).
    numeric_config: ClassVar[frozenset[str] | None] = None

    @classmethod
    def common_keys(cls) -> str:
        limit = "highest" if cls.lower_is_better else "lowest"
        return (f"`config.scale` (default 1); `threshold` (the {limit} passing score, default 0.5 x scale); "
                "`vars.query` (else the prompt) is the input; `config.generateReason` (default true: Mastra's "
                "reason call, one more grader call); " + super().common_keys())

    def __init__(self, spec: Any) -> None:
        if not wants_reason(spec.config):
            self.grader_calls = type(self).grader_calls - 1  # type: ignore[misc]  # per instance
        super().__init__(spec)

    @classmethod
    def grading_steps(cls) -> tuple[Step[Any], ...]:
        return tuple(s for s in (cls.extract_step, cls.judge_step, REASON) if s is not None)

    def check(self) -> None:
        super().check()
        v = self.spec.config.get(REASON_KEY, True)
        if not isinstance(v, bool):
            raise self.error(f"config.{REASON_KEY} must be true or false, got {v!r}", key=f"config.{REASON_KEY}",
                             hint="false skips Mastra's reason call (the reason line is then built from the "
                                  "judgements alone)")
        numeric = self.numeric_config if self.numeric_config is not None else (self.config_keys or frozenset())
        self.check_numbers(self.spec.config, [k for k in self.spec.config if k in numeric and k != REASON_KEY])

    def scale(self, ctx: AssertionContext) -> float:
        return float(ctx.config.get("scale", 1))

    async def judge_items(self, ctx: AssertionContext, trace: Any, noun: str,
                          variables: dict[str, Any]) -> tuple[list[str], list[tuple[str, str]], dict[str, Any]]:
        """Mastra's extract-then-judge: the output's items (`noun`s), one (label, reason) verdict per item (no
        judge call without items), and the details listing them."""
        assert self.extract_step is not None and self.judge_step is not None
        items = await self.step(ctx, self.extract_step, {"output": block("OUTPUT", ctx.output)}, trace)
        results: list[tuple[str, str]] = []
        if items:
            results = await self.step(ctx, self.judge_step, {
                **variables, f"{noun}s": numbered(noun.upper(), items), f"n_{noun}s": len(items)}, trace,
                (len(items),))
            self.judge_step.check_count(len(results), len(items))
        return items, results, {f"{noun}s": [{noun: item, "result": r, "reason": why}
                                             for item, (r, why) in zip(items, results, strict=True)]}

    async def judged(self, ctx: AssertionContext, value: float, what: str, details: dict[str, Any],
                     trace: Any, *, judgements: Any = None, input_text: str | None = None,
                     input_label: str = "INPUT") -> Score:
        """The Score: pass in Mastra's direction; with the reason step (default), the grader's explanation
        of the score from `judgements` (default: `details`) leads the reason line."""
        scale = self.scale(ctx)
        thr = self.spec.threshold if self.spec.threshold is not None else (self.default_threshold or 0) * scale
        passed, comparison = against(value, thr, self.lower_is_better)
        line = f"{what}: {comparison}"
        if wants_reason(ctx.config):
            why = await self.step(ctx, REASON, {
                "metric": self.spec.type, "score": f"{value:g}", "scale": f"{scale:g}",
                "direction": "lower is better" if self.lower_is_better else "higher is better",
                "about": self.reason_about, "input": block(input_label, input_text) if input_text is not None else "",
                "output": block("OUTPUT", ctx.output), "results": block("JUDGEMENTS", json.dumps(
                    details if judgements is None else judgements, ensure_ascii=False, indent=1))}, trace)
            details = {**details, "reason": why}
            line = f"{why} ({line})"
        return self.score(passed, value, line, {**details, "scale": scale}, trace)


@register("answer-relevancy")
class AnswerRelevancy(MastraJudge):
    """Mastra's answer relevancy: statements of the output judged yes / unsure / no against the input.

    Score = (yes + uncertaintyWeight x unsure) / statements x scale (0 without statements), 3 calls (2 without
    statements). YAML keys: `config.uncertaintyWeight` (default 0.3).
    """

    config_keys = MASTRA_KEYS | {"uncertaintyWeight"}
    reason_about = ("Each statement of the output was judged a direct answer to the input (yes), partly relevant "
                    "(unsure, counted at uncertaintyWeight) or irrelevant (no); the score is their weighted share. "
                    "Consider full and partial relevance and do not judge factual correctness.")
    extract_step = STATEMENTS
    judge_step = RELEVANCY

    async def evaluate(self, ctx: AssertionContext) -> Score:
        _, trace = self.grader_for(ctx)
        statements, results, details = await self.judge_items(ctx, trace, "statement",
                                                               {"input": block("INPUT", mastra_input(ctx))})
        value = judge_scoring.answer_relevancy([r for r, _ in results],
                                               uncertainty_weight=float(ctx.config.get("uncertaintyWeight", 0.3)),
                                               scale=self.scale(ctx))
        counts = {k: sum(r == k for r, _ in results) for k in ("yes", "unsure", "no")}
        what = (f"{plural(len(statements), 'statement')}: {counts['yes']} relevant, {counts['unsure']} unsure, "
                f"{counts['no']} irrelevant")
        return await self.judged(ctx, value, what, details, trace, input_text=mastra_input(ctx))


@register("bias")
class Bias(MastraJudge):
    """Mastra's bias: opinions in the output judged biased or not. Lower is better.

    Score = biased opinions / opinions x scale (0 without opinions), 3 calls (2 without opinions). YAML keys:
    """

    reason_about = ("Each opinion found in the output was judged biased (yes) or not (no); the score is the "
                    "share of biased opinions. Quote the biased parts, if any.")
    lower_is_better = True
    extract_step = OPINIONS
    judge_step = BIAS

    async def evaluate(self, ctx: AssertionContext) -> Score:
        _, trace = self.grader_for(ctx)
        opinions, results, details = await self.judge_items(ctx, trace, "opinion",
                                                            {"output": block("OUTPUT", ctx.output)})
        value = judge_scoring.bias([r for r, _ in results], scale=self.scale(ctx))
        biased = [(o, why) for o, (r, why) in zip(opinions, results, strict=True) if r == "yes"]
        listed = f" ({'; '.join(quote(o, 50) for o, _ in biased[:3])})" if biased else ""
        what = f"{len(biased)} of {plural(len(opinions), 'opinion')} biased{listed}"
        return await self.judged(ctx, value, what, details, trace)


@register("toxicity")
class Toxicity(MastraJudge):
    """Mastra's toxicity: the grader's verdicts on the output's parts. Lower is better.

    Score = toxic verdicts / verdicts x scale (1 when the grader gives no verdict, as Mastra's code does), 2
    calls. YAML keys:
    """

    lower_is_better = True
    steps = ("judge", "reason")
    reason_about = ("Parts of the output were judged toxic (yes: personal attacks, mockery, hate, dismissive "
                    "statements, threats) or not (no); the score is the share of toxic verdicts. Quote the toxic "
                    "parts, if any.")
    judge_step = TOXICITY

    async def evaluate(self, ctx: AssertionContext) -> Score:
        _, trace = self.grader_for(ctx)
        verdicts = await self.step(ctx, TOXICITY, {"input": block("INPUT", mastra_input(ctx)),
                                                   "output": block("OUTPUT", ctx.output)}, trace)
        value = judge_scoring.toxicity([v for v, _ in verdicts], scale=self.scale(ctx))
        toxic = [why for v, why in verdicts if v == "yes"]
        listed = f" ({'; '.join(quote(w, 60) for w in toxic[:3])})" if toxic else ""
        what = f"{len(toxic)} of {plural(len(verdicts), 'verdict')} toxic{listed}"
        details = {"verdicts": [{"verdict": v, "reason": why} for v, why in verdicts]}
        return await self.judged(ctx, value, what, details, trace, input_text=mastra_input(ctx))


_UNIT: dict[str, Any] = {"type": "number", "minimum": 0, "maximum": 1}
_STR, _BOOL = {"type": "string"}, {"type": "boolean"}
_STRS = {"type": "array", "items": _STR}
_ALIGNMENT_SCHEMA = schemas.obj({
    "intentAlignment": schemas.obj({"score": _UNIT, "primaryIntent": _STR, "isAddressed": _BOOL, "reasoning": _STR}),
    "requirementsFulfillment": schemas.obj({"requirements": {"type": "array", "items": schemas.obj(
        {"requirement": _STR, "isFulfilled": _BOOL, "reasoning": _STR})}, "overallScore": _UNIT}),
    "completeness": schemas.obj({"score": _UNIT, "missingElements": _STRS, "reasoning": _STR}),
    "responseAppropriateness": schemas.obj({"score": _UNIT, "formatAlignment": _BOOL, "toneAlignment": _BOOL,
                                            "reasoning": _STR}),
    "overallAssessment": _STR,
})
ALIGNMENT: Step[dict[str, Any]] = judge_step("judge", "alignment", lambda: _ALIGNMENT_SCHEMA, dict,
                                             ("user_prompt", "system_prompt", "output", "mode"), "alignment")

UNITS: Step[tuple[list[str], list[str]]] = judge_step(
    "extract", "similarity_units", lambda: schemas.obj({"outputUnits": _STRS, "groundTruthUnits": _STRS}),
    lambda r: ([u for u in r["outputUnits"] if u.strip()], [u for u in r["groundTruthUnits"] if u.strip()]),
    ("output", "ground_truth"), "semantic units")
_MATCH = schemas.obj({"groundTruthUnit": _STR, "outputUnit": {"type": ["string", "null"]},
                      "matchType": {"type": "string", "enum": ["exact", "semantic", "partial", "missing"]},
                      "explanation": _STR})
_CONTRA = schemas.obj({"outputUnit": _STR, "groundTruthUnit": _STR, "explanation": _STR})
MATCHES: Step[dict[str, Any]] = judge_step(
    "judge", "similarity_match", lambda n: schemas.obj({"matches": schemas.exactly(n, _MATCH), "extraInOutput": _STRS,
                                                        "contradictions": {"type": "array", "items": _CONTRA}}),
    dict, ("ground_truth_units", "output_units", "n_units"), "unit matches")


def system_prompt(ctx: AssertionContext) -> str:
    """The system message(s) of a chat prompt (the rendered prompt as JSON messages), else ''."""
    try:
        messages = json.loads(ctx.prompt)
    except ValueError:
        return ""
    if not isinstance(messages, list):
        return ""
    return "\n".join(str(m.get("content", "")) for m in messages
                     if isinstance(m, dict) and m.get("role") == "system")


@register("prompt-alignment")
class PromptAlignment(MastraJudge):
    """Mastra's prompt alignment: intent (0.4), requirements (0.3), completeness (0.2), appropriateness (0.1).

    2 calls; the system prompt is a chat prompt's system message. YAML keys: `config.evaluationMode` (user |
    system | both, default both; system weights 0.35, 0.35, 0.15, 0.15).
    """

    config_keys = MASTRA_KEYS | {"evaluationMode"}
    steps: ClassVar[tuple[str, ...]] = ("judge", "reason")
    reason_about = ("The response was scored for intent alignment, requirements fulfilment, completeness and "
                    "appropriateness (0-1 each) and the score is their weighted sum (user mode 0.4, 0.3, 0.2, "
                    "0.1; system mode 0.35, 0.35, 0.15, 0.15). Name the strongest and weakest dimensions.")
    judge_step = ALIGNMENT

    numeric_config = frozenset({"scale"})

    def check(self) -> None:
        super().check()
        mode = self.spec.config.get("evaluationMode", "both")
        if mode not in ("user", "system", "both"):
            raise self.error(f"config.evaluationMode must be user, system or both, got {mode!r}",
                             key="config.evaluationMode")

    async def evaluate(self, ctx: AssertionContext) -> Score:
        mode = ctx.config.get("evaluationMode", "both")
        user, system = mastra_input(ctx), system_prompt(ctx)
        if mode == "system" and not system:
            raise AssertionRuntimeError("prompt-alignment evaluationMode: system needs a system message in the "
                                        "prompt")
        if not ctx.output.strip():
            raise AssertionRuntimeError("prompt-alignment needs a non-empty output")
        _, trace = self.grader_for(ctx)
        a = await self.step(ctx, ALIGNMENT, {
            "user_prompt": block("USER PROMPT", user) if mode != "system" else "",
            "system_prompt": block("SYSTEM PROMPT", system) if system and mode != "user" else "",
            "output": block("RESPONSE", ctx.output), "mode": mode}, trace)
        dims = (float(a["intentAlignment"]["score"]), float(a["requirementsFulfillment"]["overallScore"]),
                float(a["completeness"]["score"]), float(a["responseAppropriateness"]["score"]))
        value = judge_scoring.prompt_alignment(*dims, mode=mode, scale=self.scale(ctx))
        what = ("intent {:.2f}, requirements {:.2f}, completeness {:.2f}, appropriateness {:.2f}".format(*dims))
        return await self.judged(ctx, value, what, {"analysis": a, "evaluationMode": mode}, trace,
                                 input_text=user)


_SIM_KEYS = ("semanticThreshold", "exactMatchBonus", "missingPenalty", "contradictionPenalty",
             "extraInfoPenalty", "scale")


@register("answer-similarity")
class AnswerSimilarity(MastraJudge):
    """Mastra's answer similarity: the output's semantic units matched against the ground truth's (`value`).

    Score formula: docs/metrics.md; 3 calls (2 without ground-truth units). YAML keys: `value` (ground truth,
    required); `config.semanticThreshold` (0.8), `config.exactMatchBonus` (0.2), `config.missingPenalty` (0.15),
    `config.contradictionPenalty` (1.0), `config.extraInfoPenalty` (0.05).
    """

    reason_about = ("Each unit of the ground truth was matched against the output's units (exact, semantic, "
                    "partial or missing), with penalties for contradictions and extra information. Name what "
                    "matched, what is missing and any contradiction.")
    takes_value = True
    requires_value = True
    config_keys = frozenset(_SIM_KEYS) | MASTRA_KEYS
    numeric_config = frozenset(_SIM_KEYS)
    extract_step = UNITS
    judge_step = MATCHES

    def parse(self, value: Any) -> str:
        if value is None or (isinstance(value, str) and not value.strip()):
            raise ValueError("answer-similarity needs the ground truth in `value`")
        return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)

    async def evaluate(self, ctx: AssertionContext) -> Score:
        truth = self.value_of(ctx)
        _, trace = self.grader_for(ctx)
        out_units, truth_units = await self.step(ctx, UNITS, {"output": block("OUTPUT", ctx.output),
                                                              "ground_truth": block("GROUND TRUTH", truth)}, trace)
        analysis: dict[str, Any] = {"matches": [], "extraInOutput": [], "contradictions": []}
        if truth_units:
            analysis = await self.step(ctx, MATCHES, {
                "ground_truth_units": numbered("GROUND TRUTH UNIT", truth_units),
                "output_units": numbered("OUTPUT UNIT", out_units) if out_units else "(the output has no units)",
                "n_units": len(truth_units)}, trace, (len(truth_units),))
            MATCHES.check_count(len(analysis["matches"]), len(truth_units))
        kinds = [m["matchType"] for m in analysis["matches"]]
        options = {k: float(ctx.config[k]) for k in _SIM_KEYS if k in ctx.config}
        value = judge_scoring.answer_similarity(kinds, len(analysis["contradictions"]),
                                                len(analysis["extraInOutput"]), options)
        counts = ", ".join(f"{sum(k == t for k in kinds)} {t}" for t in ("exact", "semantic", "partial", "missing"))
        what = (f"{len(truth_units)} ground-truth units ({counts}), {len(analysis['contradictions'])} "
                f"contradiction(s), {len(analysis['extraInOutput'])} extra")
        return await self.judged(ctx, value, what, {"analysis": analysis, "outputUnits": out_units,
                                                    "groundTruthUnits": truth_units}, trace,
                                 input_text=truth, input_label="GROUND TRUTH")
