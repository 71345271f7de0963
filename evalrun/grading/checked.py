"""`Checked`: a Grader seen through its steps' shape checks, whatever the grader (LLM, builtin, a plugin's).

Every graded assertion gets its grader wrapped (GradedAssertion.grader_for), so the one check that a pipeline
result has the request's size (one verdict per claim, claims x chunks, one judgement per chunk) lives in the
Step objects (grading/steps.py), not in each metric. (The LLM grader's reply schemas also pin the lengths: that
is what the model is asked for and what its one repair attempt corrects.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from evalrun.grading.steps import ATTRIBUTE, CLASSIFY, VERIFY, Step
from evalrun.types import ChunkRelevance, GraderTrace, Verdict

if TYPE_CHECKING:
    from evalrun.grading.base import Grader


class Checked:
    """Grader protocol over `inner`, checking each pipeline result's size with its Step."""

    def __init__(self, inner: Grader) -> None:
        self.inner = inner
        self.id = inner.id
        self.description = inner.description

    def supports(self, step: Step[Any]) -> bool:
        from evalrun.grading.steps import supported

        return supported(self.inner, step)

    async def extract_claims(self, text: str, trace: GraderTrace, *, question: str | None = None) -> list[str]:
        return await self.inner.extract_claims(text, trace, question=question)

    async def verify(self, claims: list[str], evidence: list[str], trace: GraderTrace, *,
                     question: str | None = None) -> list[Verdict]:
        verdicts = await self.inner.verify(claims, evidence, trace, question=question)
        VERIFY.check_count(len(verdicts), len(claims))
        return verdicts

    async def attribute(self, claims: list[str], chunks: list[str], trace: GraderTrace) -> list[list[bool]]:
        matrix = await self.inner.attribute(claims, chunks, trace)
        ATTRIBUTE.check_matrix(matrix, len(claims), len(chunks))
        return matrix

    async def classify_chunks(self, query: str, output: str, chunks: list[str],
                              trace: GraderTrace) -> ChunkRelevance:
        judged = await self.inner.classify_chunks(query, output, chunks, trace)
        CLASSIFY.check_count(len(judged.chunks), len(chunks))
        return judged

    async def judge(self, prompt: str, schema: dict[str, Any], trace: GraderTrace, *,
                    step: str = "judge") -> dict[str, Any]:
        return await self.inner.judge(prompt, schema, trace, step=step)
