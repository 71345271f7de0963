"""Grading steps: the Grader protocol, and one `Step` per grader operation (prompt template, reply schema, parser
into a typed result, the graders that can perform it) shared by every metric. The claim pipeline's steps are the
protocol's methods; a judge-style metric declares its own step (`judge_step`) and performs it with `ask()`."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any, Generic, Protocol, TypeVar, runtime_checkable

from evalrun.errors import AssertionRuntimeError, GraderError
from evalrun.grading import schemas
from evalrun.types import ChunkJudgement, ChunkRelevance, GraderTrace, Verdict

R = TypeVar("R")
Schema = dict[str, Any]


@runtime_checkable
class Grader(Protocol):
    """The claim-pipeline steps every graded metric is built from. Each method records its calls in `trace` and
    raises GraderError when it cannot answer; result lengths are exact."""

    #: Shown in reports: a model id, or "builtin".
    id: str
    #: One-line description for the run summary, e.g. "builtin (offline, lexical)".
    description: str

    def supports(self, step: Step[Any]) -> bool:
        """Whether this grader can perform `step`; checked by validate before any call."""
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


#: Grader kinds: "llm" (any model through litellm) and "builtin" (offline, lexical).
LLM = "llm"
BUILTIN = "builtin"
ALL_GRADERS = frozenset({LLM, BUILTIN})
MODEL_ONLY = frozenset({LLM})


@dataclass(frozen=True)
class Step(Generic[R]):
    """One grader operation: template, reply schema, parser into a typed result, supporting graders."""

    #: The step's name: the key of a rubricPrompt override and the label of its calls in the trace.
    name: str
    #: Prompt template file under grading/prompts/ (without .j2).
    template: str
    #: Reply schema for the request's sizes (e.g. verify(n_claims, n_evidence)).
    schema: Callable[..., Schema]
    #: Valid reply (already checked against `schema`) -> typed result.
    parse: Callable[[dict[str, Any]], R]
    #: Variables the template receives (documented for rubricPrompt overrides).
    variables: tuple[str, ...] = ()
    #: Grader kinds that can perform this step.
    graders: frozenset[str] = MODEL_ONLY
    #: What the step decides, for messages ("claims", "verdicts", ...).
    produces: str = "reply"
    #: The template's text, for steps defined outside evalrun (plugins); None: read grading/prompts/<template>.j2.
    source: str | None = None

    def check_count(self, got: int, expected: int, what: str = "") -> None:
        """A result of the wrong size is a GraderError, never padded or truncated (the one length check)."""
        if got != expected:
            label = f"{self.name} ({what})" if what else self.name
            raise GraderError(f"{label}: grader returned {got} item(s) for {expected}")


@cache
def builtin_template(name: str) -> str:
    """The text of grading/prompts/<name>.j2 (a step's template, or the grader's system/repair/json_mode text)."""
    return resources.files("evalrun.grading").joinpath(f"prompts/{name}.j2").read_text(encoding="utf-8")


# ------------------------------------------------------------------ the claim pipeline
def _claims(reply: dict[str, Any]) -> list[str]:
    return [c.strip() for c in reply["claims"] if c.strip()]


def _verdicts(reply: dict[str, Any]) -> list[Verdict]:
    return [Verdict(v["verdict"], v["reason"], tuple(sorted(set(v["evidence"])))) for v in reply["verdicts"]]


def _matrix(reply: dict[str, Any]) -> list[list[bool]]:
    return [list(row) for row in reply["matrix"]]


def _relevance(reply: dict[str, Any]) -> ChunkRelevance:
    judged = tuple(ChunkJudgement(c["level"], c["used"], c["reason"]) for c in reply["chunks"])
    return ChunkRelevance(judged, tuple(m for m in reply["missing"] if m.strip()))


EXTRACT: Step[list[str]] = Step("extract", "extract", schemas.extract, _claims, ("text", "question", "kind"),
                                ALL_GRADERS, "claims")
VERIFY: Step[list[Verdict]] = Step(
    "verify", "verify", schemas.verify, _verdicts,
    ("claims", "evidence", "question", "n_claims", "n_evidence", "claims_list", "evidence_list"),
    ALL_GRADERS, "verdicts")
ATTRIBUTE: Step[list[list[bool]]] = Step(
    "attribute", "attribute", schemas.attribute, _matrix,
    ("claims", "chunks", "n_claims", "n_chunks", "claims_list", "chunks_list"), ALL_GRADERS, "attributions")
CLASSIFY: Step[ChunkRelevance] = Step(
    "classify", "classify", schemas.classify, _relevance,
    ("query", "output", "chunks", "n_chunks", "chunks_list"), ALL_GRADERS, "chunk relevance")

#: The pipeline steps by name (the names metrics list in `steps` for rubricPrompt overrides).
PIPELINE: Mapping[str, Step[Any]] = {s.name: s for s in (EXTRACT, VERIFY, ATTRIBUTE, CLASSIFY)}


def supported(grader: Grader, step: Step[Any]) -> bool:
    """`grader.supports(step)`; a third-party grader without `supports` is assumed to do the pipeline only."""
    supports = getattr(grader, "supports", None)
    if callable(supports):
        return bool(supports(step))
    return step.name in PIPELINE and step is PIPELINE[step.name]


def unsupported(grader: Grader, metric: str, needed: tuple[Step[Any], ...]) -> str | None:
    """Why `grader` cannot grade `metric` (the steps it lacks), or None when it can: one message for
    validate (a ConfigError before any call) and for a run (the assertion is an ERROR, no call made)."""
    missing = [s for s in needed if not supported(grader, s)]
    if not missing:
        return None
    who = "the builtin grader" if grader.id == "builtin" else f"grader {grader.id!r}"
    names = ", ".join(repr(s.name) for s in missing)
    return f"{who} cannot grade {metric}: it needs a model for grader step {names}"



class Checked:
    """Grader protocol over `inner`, checking each pipeline result's size with its Step (every graded assertion
    gets its grader wrapped, so the length check lives here, not in each metric)."""

    def __init__(self, inner: Grader) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> Any:  # id, description, extract_claims, judge: the inner grader's
        return getattr(self.inner, name)

    def supports(self, step: Step[Any]) -> bool:
        return supported(self.inner, step)

    async def verify(self, claims: list[str], evidence: list[str], trace: GraderTrace, *,
                     question: str | None = None) -> list[Verdict]:
        verdicts = await self.inner.verify(claims, evidence, trace, question=question)
        VERIFY.check_count(len(verdicts), len(claims))
        return verdicts

    async def attribute(self, claims: list[str], chunks: list[str], trace: GraderTrace) -> list[list[bool]]:
        matrix = await self.inner.attribute(claims, chunks, trace)
        ATTRIBUTE.check_count(len(matrix), len(claims), "rows")
        for row in matrix:
            ATTRIBUTE.check_count(len(row), len(chunks), "columns")
        return matrix

    async def classify_chunks(self, query: str, output: str, chunks: list[str],
                              trace: GraderTrace) -> ChunkRelevance:
        judged = await self.inner.classify_chunks(query, output, chunks, trace)
        CLASSIFY.check_count(len(judged.chunks), len(chunks))
        return judged


#: The hint that goes with `unsupported()`.
CHOOSE_LLM = ("choose an LLM grader: --grader MODEL, `grader:` in the config or `provider:` on the assertion "
              "(e.g. openai:gpt-4o-mini, ollama:chat:llama3)")


# ------------------------------------------------------------------ judge-style steps
def judge_step(name: str, template: str, schema: Callable[..., Schema], parse: Callable[[dict[str, Any]], R],
               variables: tuple[str, ...], produces: str = "judgement", *, source: str | None = None) -> Step[R]:
    """A step only a model can perform (the builtin grader has no judge). `template` names
    grading/prompts/<template>.j2, unless `source` gives the template's text (a plugin's own prompt)."""
    return Step(name, template, schema, parse, variables, MODEL_ONLY, produces, source)


def render_prompt(step: Step[Any], variables: Mapping[str, Any], *, override: str | None = None,
                  extra: Mapping[str, Any] | None = None) -> str:
    """The step's prompt: the override template (which also sees `extra`, e.g. the case's vars) or its own."""
    from evalrun import chats, templating

    source = override if override is not None else step.source
    if source is None:
        source = builtin_template(step.template)
    scope = {**(extra or {}), **variables}
    try:
        chat = chats.from_json(source) if override is not None and source.startswith("[{") else None
        if chat is not None:  # promptfoo's chat rubricPrompt: each content rendered, the list stays valid JSON
            import json

            return json.dumps([{**m, "content": templating.render(str(m.get("content", "")), scope)}
                               for m in chat], ensure_ascii=False)
        return templating.render(source, scope)
    except Exception as e:  # noqa: BLE001 - a user template error is this assertion's error
        what = f"rubricPrompt for step {step.name!r}" if override is not None else f"{step.template}.j2"
        raise AssertionRuntimeError(f"{what}: {e} (available variables: {', '.join(sorted(scope))})") from None


async def ask(grader: Grader, step: Step[R], variables: Mapping[str, Any], trace: GraderTrace, *,
              schema_args: tuple[Any, ...] = (), override: str | None = None,
              extra: Mapping[str, Any] | None = None) -> R:
    """Render the step's prompt, ask the grader for a reply matching its schema, and parse it."""
    prompt = render_prompt(step, variables, override=override, extra=extra)
    reply = await grader.judge(prompt, step.schema(*schema_args), trace, step=step.name)
    return step.parse(reply)
