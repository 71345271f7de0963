"""Graded noise assertions: noise-sensitivity (RAGAS: wrong claims of the output traced to the context chunks
they came from, relevant and irrelevant mode) over the claim pipeline, and Mastra's noise-robustness (a judge)."""

from __future__ import annotations

from typing import Any

from evalrun.assertions.base import AssertionContext, Score
from evalrun.assertions.graded import Chunk, GradedAssertion, plural, query_of, quote, runtime_chunks
from evalrun.assertions.registry import register
from evalrun.errors import AssertionRuntimeError
from evalrun.grading import schemas
from evalrun.grading.fence import block
from evalrun.grading.scoring import claims as scoring
from evalrun.grading.steps import judge_step


@register("noise-sensitivity")
class NoiseSensitivity(GradedAssertion):
    """Wrong claims / all claims of the output, traced to the context chunks they came from. Lower is better.

    YAML keys: `value` = ground truth (required); `threshold` (default 0.2; passes when score <= threshold);
    `config.mode` relevant (default) | irrelevant; `config.formula` default | ragas; `config.contextChunks`
    ([{text, relevant}], strings, or a string; else `vars.contextChunks`, else the context);
    `config.noiseContext` (one extra irrelevant chunk). At most 4 grader calls (docs/metrics.md);
    """

    uses_context = True
    grader_calls = 4
    default_threshold = 0.2
    requires_value = True
    lower_is_better = True
    config_keys = frozenset({"mode", "formula", "contextChunks", "noiseContext"})
    steps = ("verify", "extract", "attribute")
    value_hint = "give the ground-truth answer as a string"
    value_text = "the ground truth"
    context_vars = ("context", "contextChunks")
    context_config = ("contextChunks", "noiseContext")

    def needs_context(self) -> bool:
        """The default (relevant mode, default formula) counts wrong claims against the ground truth even with
        no chunk; the irrelevant mode and the ragas formula count only claims a chunk entails: 0 without one."""
        cfg = self.spec.config
        return cfg.get("mode") == "irrelevant" or cfg.get("formula") == "ragas"

    def check(self) -> None:
        super().check()
        cfg = self.spec.config
        for key, allowed in (("mode", scoring.NOISE_MODES), ("formula", scoring.NOISE_FORMULAS)):
            if cfg.get(key, allowed[0]) not in allowed:
                raise self.error(f"unknown {key} {cfg[key]!r}", key=f"config.{key}", hint=" or ".join(allowed))
        self.check_chunks(cfg.get("contextChunks"), "config.contextChunks")
        noise = cfg.get("noiseContext")
        if noise is not None and not isinstance(noise, str):
            raise self.error("noiseContext must be a string", key="config.noiseContext")

    async def labelled_chunks(self, ctx: AssertionContext) -> list[Chunk]:
        """`contextChunks` (config, else vars), else the context (one string is the relevant chunk), plus
        `config.noiseContext` as an irrelevant chunk; may be empty."""
        labelled = ctx.config.get("contextChunks")
        where = "config.contextChunks"
        if labelled is None and "contextChunks" in ctx.vars:
            labelled, where = ctx.vars["contextChunks"], "vars.contextChunks"
        raw = (labelled, where) if labelled is not None else await self.raw_context(ctx)
        chunks = runtime_chunks(*raw) if raw is not None else []
        if labelled is None and raw is not None and isinstance(raw[0], str):
            chunks = [Chunk(raw[0], True)]
        noise = ctx.config.get("noiseContext")
        if noise is not None:
            if not isinstance(noise, str):
                raise AssertionRuntimeError(f"config.noiseContext must be a string, not {type(noise).__name__}")
            chunks = [*chunks, Chunk(noise, False)]
        return chunks

    async def evaluate(self, ctx: AssertionContext) -> Score:
        truth = self.value_of(ctx)
        mode = str(ctx.config.get("mode", "relevant"))
        formula = str(ctx.config.get("formula", "default"))
        chunks = await self.labelled_chunks(ctx)
        need_reference = any(c.relevant is None for c in chunks)
        grader, trace = self.grader_for(ctx)
        question = query_of(ctx, required=False)
        import asyncio  # here, not at import: `validate` imports every assertion module and never needs it
        claims, ref_claims = await asyncio.gather(
            grader.extract_claims(ctx.output, trace, question=question),
            grader.extract_claims(truth, trace) if need_reference else asyncio.sleep(0, []))
        details: dict[str, Any] = {"mode": mode, "formula": formula, "claims": []}
        if not claims:
            details["chunks"] = [{"text": c.text, "relevant": c.relevant} for c in chunks]
            return self.score(True, None, "output made no factual claims: no claim can be wrong "
                              "(no score)", details, trace)
        n = len(claims)
        verdicts, matrix = await asyncio.gather(
            grader.verify(claims, [truth], trace, question=question),
            grader.attribute([*claims, *ref_claims], [c.text for c in chunks], trace))
        entails, ref_entails = matrix[:n], matrix[n:]
        derived = scoring.chunk_relevance(ref_entails, len(chunks))
        relevant = [c.relevant if c.relevant is not None else derived[k] for k, c in enumerate(chunks)]
        correct = [v.verdict == "supported" for v in verdicts]
        counted = scoring.noise_counted(correct, entails, relevant, mode, formula)
        value = sum(counted) / n
        used = {"labels" if c.relevant is not None else "ground-truth claims" for c in chunks}
        details.update({
            "claims": [{"text": claim, "verdict": v.verdict, "reason": v.reason,
                        "chunks": [k for k, e in enumerate(row) if e], "correct": ok, "counted": cnt}
                       for claim, v, row, ok, cnt in zip(claims, verdicts, entails, correct, counted, strict=True)],
            "chunks": [{"text": c.text, "relevant": r, "label": c.relevant}
                       for c, r in zip(chunks, relevant, strict=True)],
            "chunk_relevance": relevant,
            "relevance_source": " + ".join(sorted(used)) if used else "none (no chunks)",
        })
        if ref_claims:
            details["ground_truth_claims"] = [{"text": t, "chunks": [k for k, e in enumerate(row) if e]}
                                              for t, row in zip(ref_claims, ref_entails, strict=True)]
        passed, comparison = self.verdict(value)
        wrong = [i for i, ok in enumerate(correct) if not ok]
        shown = [i for i in wrong if counted[i]] or wrong
        parts = [f"{quote(claims[i])}, {_source(entails[i], relevant)}" for i in shown[:3]]
        more = f"; +{len(shown) - 3} more" if len(shown) > 3 else ""
        listed = f" ({'; '.join(parts)}{more})" if parts else ""
        counted_note = "" if sum(counted) == len(wrong) else (f", {sum(counted)} counted in {mode} mode"
                                                               + (" (ragas)" if formula == "ragas" else ""))
        reason = f"{plural(n, 'claim')}, {len(wrong)} incorrect{listed}{counted_note}: {comparison}"
        return self.score(passed, value, reason, details, trace)


def _source(row: list[bool], relevant: list[bool]) -> str:
    """Where a claim came from, chunks numbered from 1: 'from irrelevant chunk 2', 'in no chunk'."""
    hits = [k for k, e in enumerate(row) if e]
    if not hits:
        return "in no chunk"
    labels = {relevant[k] for k in hits}
    kind = "relevant " if labels == {True} else "irrelevant " if labels == {False} else ""
    word = "chunk" if len(hits) == 1 else "chunks"
    return f"from {kind}{word} {', '.join(str(k + 1) for k in hits)}"


_SCORING = {"impactWeights": "weights", "majorIssuePerItem": "major_issue_per_item",
            "maxMajorIssuePenalty": "max_major_issue_penalty", "discrepancyThreshold": "discrepancy_threshold"}

ROBUSTNESS = judge_step("judge", "noise_robustness", schemas.noise_robustness, dict,
                        ("query", "noisy_query", "baseline", "output", "noise_type"), "robustness analysis")


@register("noise-robustness")
class NoiseRobustness(GradedAssertion):
    """Compares the output (answer to a noisy query) with a baseline answer; Mastra's scoring. Higher is better.

    YAML keys: `config.baselineResponse` (the answer to the clean query, required), `config.noisyQuery`
    (required), `config.noiseType` (misinformation | distractors | adversarial), `config.scoring` {impactWeights
    {none, minimal, moderate, significant, severe}, majorIssuePerItem 0.1, maxMajorIssuePenalty 0.3,
    discrepancyThreshold 0.2}; `vars.query` (the original query); `threshold` (default 0.7); one call (an LLM
    grader);
    """

    default_threshold = 0.7
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
        robust, issues = float(reply["robustnessScore"]), reply["majorIssues"]
        value = scoring.noise_robustness(robust, levels, len(issues), **kwargs)
        passed, comparison = self.verdict(value)
        listed = f" ({'; '.join(quote(i, 60) for i in issues[:3])})" if issues else ""
        reason = f"robustness {robust:.2f}, {plural(len(issues), 'major issue')}{listed}: {comparison}"
        details = {"dimensions": dict(reply["dimensions"]), "robustnessScore": reply["robustnessScore"],
                   "majorIssues": list(issues), "grader_reason": reply.get("reason", "")}
        return self.score(passed, value, reason, details, trace)
