"""Mastra's prompt-alignment and answer-similarity scorers (LLM grader; formulas in evalrun/grading/scoring/verdicts.py).

prompt-alignment: one `judge` call scores intent, requirements, completeness and appropriateness (0-1 each);
answer-similarity: `extract` semantic units of output and ground truth, then `judge` their matches (2 calls).
Both end with Mastra's reason call (judges.explain), unless `config.generateReason: false`.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

from evalrun.assertions.base import AssertionContext, Score
from evalrun.assertions.judges import MASTRA_KEYS, MastraJudge
from evalrun.assertions.mastra_text import mastra_input
from evalrun.assertions.registry import register
from evalrun.errors import AssertionRuntimeError
from evalrun.grading import schemas
from evalrun.grading.fence import block, numbered
from evalrun.grading.scoring import verdicts as judge_scoring
from evalrun.grading.steps import Step, judge_step

_UNIT: dict[str, Any] = {"type": "number", "minimum": 0, "maximum": 1}
_ALIGNMENT_SCHEMA = schemas.obj({
    "intentAlignment": schemas.obj({"score": _UNIT, "primaryIntent": {"type": "string"},
                                    "isAddressed": {"type": "boolean"}, "reasoning": {"type": "string"}}),
    "requirementsFulfillment": schemas.obj({
        "requirements": {"type": "array", "items": schemas.obj({
            "requirement": {"type": "string"}, "isFulfilled": {"type": "boolean"}, "reasoning": {"type": "string"}})},
        "overallScore": _UNIT}),
    "completeness": schemas.obj({"score": _UNIT, "missingElements": {"type": "array", "items": {"type": "string"}},
                                 "reasoning": {"type": "string"}}),
    "responseAppropriateness": schemas.obj({"score": _UNIT, "formatAlignment": {"type": "boolean"},
                                            "toneAlignment": {"type": "boolean"}, "reasoning": {"type": "string"}}),
    "overallAssessment": {"type": "string"},
})
ALIGNMENT: Step[dict[str, Any]] = judge_step("judge", "alignment", lambda: _ALIGNMENT_SCHEMA, dict,
                                             ("user_prompt", "system_prompt", "output", "mode"), "alignment")

UNITS: Step[tuple[list[str], list[str]]] = judge_step(
    "extract", "similarity_units",
    lambda: schemas.obj({"outputUnits": {"type": "array", "items": {"type": "string"}},
                         "groundTruthUnits": {"type": "array", "items": {"type": "string"}}}),
    lambda r: ([u for u in r["outputUnits"] if u.strip()], [u for u in r["groundTruthUnits"] if u.strip()]),
    ("output", "ground_truth"), "semantic units")
_MATCH = schemas.obj({"groundTruthUnit": {"type": "string"}, "outputUnit": {"type": ["string", "null"]},
                      "matchType": {"type": "string", "enum": ["exact", "semantic", "partial", "missing"]},
                      "explanation": {"type": "string"}})
_CONTRA = schemas.obj({"outputUnit": {"type": "string"}, "groundTruthUnit": {"type": "string"},
                       "explanation": {"type": "string"}})
MATCHES: Step[dict[str, Any]] = judge_step(
    "judge", "similarity_match",
    lambda n: schemas.obj({"matches": schemas.exactly(n, _MATCH),
                           "extraInOutput": {"type": "array", "items": {"type": "string"}},
                           "contradictions": {"type": "array", "items": _CONTRA}}),
    dict, ("ground_truth_units", "output_units", "n_units"), "unit matches")


def system_prompt(ctx: AssertionContext) -> str:
    """The system message(s) of a chat prompt (the rendered prompt as JSON messages), else ''."""
    text = ctx.prompt.strip()
    if not text.startswith("["):
        return ""
    try:
        messages = json.loads(text)
    except ValueError:
        return ""
    if not isinstance(messages, list):
        return ""
    return "\n".join(str(m.get("content", "")) for m in messages
                     if isinstance(m, dict) and m.get("role") == "system")


@register("prompt-alignment")
class PromptAlignment(MastraJudge):
    """Mastra's prompt alignment: intent (0.4), requirements (0.3), completeness (0.2), appropriateness (0.1).

    YAML keys: `config.evaluationMode` (user | system | both, default both; system weights 0.35, 0.35, 0.15,
    0.15), `config.scale` (default 1); `threshold` (default 0.5 x scale); the user prompt is `vars.query`, else
    the rendered prompt; the system prompt is a chat prompt's system message; `provider`; `rubricPrompt`
    (steps judge, reason); `config.generateReason` (default true: Mastra's reason call). 2 calls (1 without
    the reason call).
    """

    grader_calls = 2
    default_threshold = 0.5
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

    Score = (exact 1 + exactMatchBonus, semantic semanticThreshold, partial half of it, missing
    -missingPenalty) / (units x (1 + exactMatchBonus)) - contradictions x contradictionPenalty - min(extras x
    extraInfoPenalty, 0.2), clamped to [0, 1], x scale. YAML keys: `value` (ground truth, required);
    `config.semanticThreshold` (0.8), `config.exactMatchBonus` (0.2), `config.missingPenalty` (0.15),
    `config.contradictionPenalty` (1.0), `config.extraInfoPenalty` (0.05), `config.scale` (1); `threshold`
    (default 0.5 x scale); `config.generateReason` (default true: Mastra's reason call); `provider`;
    `rubricPrompt` (steps extract, judge, reason). 3 calls (2 without ground-truth units or reason call).
    """

    grader_calls = 3
    reason_about = ("Each unit of the ground truth was matched against the output's units (exact, semantic, "
                    "partial or missing), with penalties for contradictions and extra information. Name what "
                    "matched, what is missing and any contradiction.")
    default_threshold = 0.5
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
