"""noise-robustness: Mastra's "noise sensitivity scorer" -- does a noisy query derail the answer? Higher is better.

YAML keys: `config.baselineResponse` (the answer to the clean query, required), `config.noisyQuery` (required),
`config.noiseType` (misinformation | distractors | adversarial, optional), `config.scoring` {impactWeights
{none, minimal, moderate, significant, severe}, majorIssuePerItem 0.1, maxMajorIssuePenalty 0.3,
discrepancyThreshold 0.2}; `vars.query` is the original query; `threshold` default 0.7; `provider`;
`rubricPrompt` (step judge). One grader call (the `judge` step; needs an LLM grader, validate says so).
"""

from __future__ import annotations

from typing import Any

from evalrun.assertions.base import AssertionContext, Score
from evalrun.assertions.context import query_of
from evalrun.assertions.graded import GradedAssertion, plural, quote
from evalrun.assertions.registry import register
from evalrun.grading import schemas
from evalrun.grading.fence import block
from evalrun.grading.scoring import claims as scoring
from evalrun.grading.steps import judge_step

_SCORING = {"impactWeights": "weights", "majorIssuePerItem": "major_issue_per_item",
            "maxMajorIssuePenalty": "max_major_issue_penalty", "discrepancyThreshold": "discrepancy_threshold"}

ROBUSTNESS = judge_step("judge", "noise_robustness", schemas.noise_robustness, dict,
                        ("query", "noisy_query", "baseline", "output", "noise_type"), "robustness analysis")


@register("noise-robustness")
class NoiseRobustness(GradedAssertion):
    """Compares the output (answer to a noisy query) with a baseline answer; Mastra's scoring. Higher is better.

    YAML keys: `config.baselineResponse`, `config.noisyQuery` (required), `config.noiseType`, `config.scoring`;
    `vars.query`; `threshold` (default 0.7); `provider`; `rubricPrompt` (step judge). One call.
    """

    summary = "robustness of the answer to a noisy query vs a baseline answer (higher is better)"
    grader_calls = 1
    default_threshold = 0.7
    uses_context = False
    config_keys = frozenset({"baselineResponse", "noisyQuery", "noiseType", "scoring"})
    steps = ("judge",)
    judge_step = ROBUSTNESS

    def check(self) -> None:
        super().check()
        cfg = self.spec.config
        for key in ("baselineResponse", "noisyQuery"):
            if not isinstance(cfg.get(key), str):
                raise self.error(f"config.{key} is required (a string)", key=f"config.{key}")
        if cfg.get("noiseType") not in (None, "misinformation", "distractors", "adversarial"):
            raise self.error(f"unknown noiseType {cfg['noiseType']!r}", key="config.noiseType",
                             hint="misinformation, distractors or adversarial")
        sc = cfg.get("scoring") or {}
        if not isinstance(sc, dict) or any(k not in _SCORING for k in sc):
            raise self.error("config.scoring accepts only " + ", ".join(_SCORING), key="config.scoring")
        weights = sc.get("impactWeights") or {}
        if not isinstance(weights, dict) or any(k not in scoring.IMPACT_WEIGHTS for k in weights):
            raise self.error("impactWeights keys: " + ", ".join(scoring.IMPACT_WEIGHTS),
                             key="config.scoring.impactWeights")

    async def evaluate(self, ctx: AssertionContext) -> Score:
        cfg = ctx.config
        query = query_of(ctx, required=True)
        variables = {"query": block("QUERY", str(query)), "noisy_query": block("NOISY QUERY", str(cfg["noisyQuery"])),
                     "baseline": block("BASELINE", str(cfg["baselineResponse"])),
                     "output": block("ANSWER", ctx.output), "noise_type": cfg.get("noiseType") or ""}
        reply, trace = await self.ask(ctx, variables)
        levels = [reply["dimensions"][d] for d in schemas.ROBUSTNESS_DIMENSIONS]
        kwargs: dict[str, Any] = {_SCORING[k]: v for k, v in (cfg.get("scoring") or {}).items()}
        value = scoring.noise_robustness(float(reply["robustnessScore"]), levels, len(reply["majorIssues"]),
                                         **kwargs)
        passed, comparison = self.verdict(value)
        issues = reply["majorIssues"]
        listed = f" ({'; '.join(quote(i, 60) for i in issues[:3])})" if issues else ""
        reason = (f"robustness {float(reply['robustnessScore']):.2f}, {plural(len(issues), 'major issue')}"
                  f"{listed}: {comparison}")
        details = {"dimensions": dict(reply["dimensions"]), "robustnessScore": reply["robustnessScore"],
                   "majorIssues": list(issues), "grader_reason": reply.get("reason", "")}
        return self.score(passed, value, reason, details, trace)
