"""`BuiltinGrader`: the Grader protocol without an LLM (offline, deterministic; a small local embedding model).
Each step records one GraderCall whose `raw` is a compact JSON record of what was decided (the audit trail);
`judge()` raises GraderError (free-form rubrics need a model), so such assertions are ERRORs, never passes."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from evalrun.errors import GraderError
from evalrun.grading import minilm
from evalrun.grading.builtin.entail import attributes, judge
from evalrun.grading.builtin.relevance import classify
from evalrun.grading.builtin.segment import claims as split_claims
from evalrun.grading.steps import BUILTIN, Step
from evalrun.types import ChunkRelevance, GraderCall, GraderTrace, Verdict


def _record(trace: GraderTrace, step: str, raw: dict[str, Any], started: float) -> None:
    trace.calls.append(GraderCall(step=step, raw=json.dumps(raw, separators=(",", ":"), ensure_ascii=False),
                                  latency_ms=(time.perf_counter() - started) * 1000.0))


def faithfulness(answer: str, context: str | list[str], question: str | None = None) -> float | None:
    """Mean support score of the claims of `answer` against `context` (the faithfulness assertion's score with
    this grader); None when the answer makes no claims."""
    found = split_claims(answer, question)
    if not found:
        return None
    evidence = (context,) if isinstance(context, str) else tuple(context)
    return sum(judge(c, evidence, question).score for c in found) / len(found)


class BuiltinGrader:
    """The offline grader. Stateless: safe to share between concurrent assertions."""

    id = "builtin"

    @property
    def description(self) -> str:
        """What grades, for the run summary: with the semantic tier or words alone."""
        return "builtin (offline, with all-MiniLM-L6-v2)" if minilm.available() else "builtin (offline, words only)"

    def supports(self, step: Step[Any]) -> bool:
        """The claim pipeline (extract, verify, attribute, classify); no judge step (it needs a model)."""
        return BUILTIN in step.graders

    async def extract_claims(self, text: str, trace: GraderTrace, *, question: str | None = None) -> list[str]:
        """Sentence/clause segmentation into short self-contained claims (see segment.py)."""
        started = time.perf_counter()
        found = split_claims(text, question)
        _record(trace, "extract", {"claims": found}, started)
        return found

    async def verify(self, claims: list[str], evidence: list[str], trace: GraderTrace, *,
                     question: str | None = None) -> list[Verdict]:
        """One verdict per claim by the lexical entailment scorer (see entail.py)."""
        started = time.perf_counter()
        ev = tuple(evidence)
        verdicts: list[Verdict] = []
        raw: list[dict[str, Any]] = []
        for c in claims:
            j = judge(c, ev, question)
            verdicts.append(Verdict(verdict=j.verdict, reason=j.reason, evidence=j.items, support=j.score))
            raw.append({"verdict": j.verdict, "score": round(j.score, 4), "reason": j.reason})
        _record(trace, "verify", {"verdicts": raw}, started)
        return verdicts

    async def attribute(self, claims: list[str], chunks: list[str], trace: GraderTrace) -> list[list[bool]]:
        """matrix[i][k] = chunk k is a plausible source of claim i (lenient, see entail.attributes)."""
        started = time.perf_counter()
        matrix = [[attributes(c, k) for k in chunks] for c in claims]
        _record(trace, "attribute", {"matrix": [[int(x) for x in row] for row in matrix]}, started)
        return matrix

    async def classify_chunks(self, query: str, output: str, chunks: list[str],
                              trace: GraderTrace) -> ChunkRelevance:
        """Chunk levels from query-term overlap, `used` from overlap with the output (see relevance.py)."""
        started = time.perf_counter()
        # in a worker thread: the embedding model (loaded on first use) must not hold up other cases' calls
        result, raw = await asyncio.to_thread(classify, query, output, chunks)
        _record(trace, "classify", raw, started)
        return result

    async def judge(self, prompt: str, schema: dict[str, Any], trace: GraderTrace, *,
                    step: str = "judge") -> dict[str, Any]:
        """Not possible without a model: raises GraderError (the assertion becomes an ERROR).

        `validate` reports such assertions before any call (supports()); this is the backstop."""
        message = (f"the builtin grader cannot perform the grader step {step!r} (it needs a model); set --grader "
                   "MODEL (e.g. --grader openai:gpt-4o-mini or --grader ollama:chat:llama3)")
        _record(trace, step, {"error": message}, time.perf_counter())
        raise GraderError(message)
