"""The Grader protocol: the claim-pipeline steps every graded metric is built from (`grading.llm.LLMGrader`,
`grading.builtin.BuiltinGrader`). Each method records its calls in the trace it is given and raises GraderError
when it cannot answer; result lengths are exact (one verdict per claim, a claims x chunks matrix)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from evalrun.types import ChunkRelevance, GraderTrace, Verdict

if TYPE_CHECKING:
    from evalrun.grading.steps import Step


@runtime_checkable
class Grader(Protocol):
    #: Shown in reports: a model id, or "builtin".
    id: str
    #: One-line description for the run summary, e.g. "builtin (offline, lexical)".
    description: str

    def supports(self, step: Step[Any]) -> bool:
        """Whether this grader can perform `step` (grading/steps.py); checked by validate before any call."""
        ...

    async def extract_claims(self, text: str, trace: GraderTrace, *, question: str | None = None) -> list[str]:
        """Split `text` into short, self-contained factual claims (possibly none)."""
        ...

    async def verify(self, claims: list[str], evidence: list[str], trace: GraderTrace, *,
                     question: str | None = None) -> list[Verdict]:
        """One verdict per claim against the evidence (ground truth or context chunks, joined). `question` is what
        the claims answer: context for what a short answer means, not something the claims assert."""
        ...

    async def attribute(self, claims: list[str], chunks: list[str], trace: GraderTrace) -> list[list[bool]]:
        """matrix[i][k] = chunk k entails claim i. Shape exactly len(claims) x len(chunks)."""
        ...

    async def classify_chunks(self, query: str, output: str, chunks: list[str],
                              trace: GraderTrace) -> ChunkRelevance:
        """Relevance level of each chunk to the query, whether the output used it, and missing information."""
        ...

    async def judge(self, prompt: str, schema: dict[str, Any], trace: GraderTrace, *,
                    step: str = "judge") -> dict[str, Any]:
        """Ask for a JSON object matching `schema` (used by rubrics and other metrics)."""
        ...
