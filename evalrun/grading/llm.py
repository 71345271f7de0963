"""The LLM grader: each grading step through a model (or any evalrun provider, `ProviderTransport`) with a JSON
reply validated against the step's schema, one repair call, and stepping down reply formats the model rejects
(docs/metrics.md, "How the LLM grader asks"). This module never imports litellm: the transport does."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Mapping
from typing import Any, Protocol, TypeVar

from evalrun import chats, templating
from evalrun.errors import GraderError, ProviderError
from evalrun.grading import steps
from evalrun.grading.fence import block, numbered
from evalrun.providers.base import CallContext, Provider
from evalrun.types import ChunkRelevance, GraderCall, GraderTrace, Messages, Output, Verdict

R = TypeVar("R")

#: Reply formats tried in turn until the model accepts one: json_schema, json_object with a schema, json_object,
#: none (the schema in the prompt only); a rejection that names the format steps down (learnt once per model).
_LEVELS = 4
_UNSUPPORTED_FORMAT = re.compile(r"response_format|json_schema|structured output", re.I)
_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.S)


def prompt_text(messages: list[dict[str, Any]]) -> str:
    """The one prompt string a provider-grader receives for these chat messages (see the module docstring)."""
    if len(messages) == 1 and messages[0].get("role") == "user" and isinstance(messages[0].get("content"), str):
        return str(messages[0]["content"])
    return json.dumps(messages, ensure_ascii=False, separators=(",", ":"))


class ProviderTransport:
    """The LLM grader's chat transport over one provider: messages -> one prompt string -> provider.call."""

    def __init__(self, provider: Provider) -> None:
        self.provider = provider

    async def chat(self, model: str, messages: list[dict[str, Any]], params: dict[str, Any]) -> Output:
        """Ask the provider; its ProviderError propagates (the grader turns it into a GraderError)."""
        return await self.provider.call(prompt_text(messages), CallContext(prompt_label="grader", use_cache=False))


class Transport(Protocol):
    """The run's LLM transport (providers/litellm_.py): cached, retried, concurrency-limited."""

    async def chat(self, model: str, messages: list[dict[str, Any]], params: dict[str, Any]) -> Output:
        ...


def _as_messages(rendered: str, system: str) -> Messages:
    """A rendered prompt that is a JSON list of chat messages is used as is; text becomes system + user."""
    text = rendered.strip()
    chat = chats.from_json(text) if text.startswith("[") else None
    return chat or [{"role": "system", "content": system}, {"role": "user", "content": rendered}]


def parse_reply(text: str | None, schema: dict[str, Any]) -> tuple[dict[str, Any] | None, str | None]:
    """(data, None) when `text` is a JSON object valid against `schema`, else (None, error message)."""
    if not text or not text.strip():
        return None, "the reply was empty"
    m = _FENCE.match(text)
    body = m.group(1) if m else text.strip()
    try:
        # strict=False: a raw newline or tab inside a string (small local models write them, even under a JSON
        # grammar) is read as itself rather than failing the reply
        data = json.loads(body, strict=False)
    except ValueError as e:
        return None, f"the reply is not valid JSON ({e})"
    if not isinstance(data, dict):
        return None, "the reply is not a JSON object"
    import jsonschema  # lazily: only runs that call an LLM grader pay for it

    err = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(schema).iter_errors(data))
    if err is not None:
        where = "/".join(str(p) for p in err.absolute_path) or "(root)"
        return None, f"at {where}: {err.message}"
    return data, None


class LLMGrader:
    """Grader protocol (grading/steps.py) over an LLM. One instance per distinct grader spec."""

    def __init__(self, model: str, transport: Transport, *, grader_id: str | None = None,
                 params: Mapping[str, Any] | None = None, prompts: Mapping[str, str] | None = None,
                 response_format: bool = True) -> None:
        self.model = model
        self.id = grader_id or model
        self.description = f"{self.id} (LLM grader)"
        self._transport = transport
        self._params: dict[str, Any] = {"temperature": 0, **(params or {})}
        self._prompts = dict(prompts or {})
        self._extra: dict[str, Any] = {}
        #: Reply format the model accepts (see _LEVELS), learnt on its first rejection and shared with with_prompts()
        #: views; `response_format=False` (a provider, not a model: it takes none) starts at "none".
        self._format = {"level": 0 if response_format else _LEVELS - 1}

    def missing_key(self) -> list[str]:
        """The API-key variables this grader's model reads when none is set (providers/ids.missing_key); [] for a
        provider grader (its provider checks its own)."""
        from evalrun.providers.ids import missing_key

        return [] if isinstance(self._transport, ProviderTransport) else missing_key(self.model, self._params)

    def with_prompts(self, overrides: Mapping[str, str], variables: Mapping[str, Any] | None = None) -> LLMGrader:
        """A view of this grader with the step templates `overrides` (step -> template), which also see `variables`
        (the case's vars; the step's own variables win on a clash)."""
        view = copy.copy(self)  # shares the model's params and learnt reply format
        view._prompts = {**self._prompts, **overrides}
        view._extra = {**self._extra, **(variables or {})}
        return view

    # ------------------------------------------------------------ pipeline steps
    def supports(self, step: steps.Step[Any]) -> bool:
        return steps.LLM in step.graders

    async def extract_claims(self, text: str, trace: GraderTrace, *, question: str | None = None) -> list[str]:
        if not text.strip():
            return []
        variables = {"text": block("TEXT", text), "question": block("QUESTION", question) if question else "",
                     "kind": "text"}
        return await self._run(steps.EXTRACT, variables, (), trace)

    async def verify(self, claims: list[str], evidence: list[str], trace: GraderTrace, *,
                     question: str | None = None) -> list[Verdict]:
        if not claims:
            return []
        if not evidence:
            return [Verdict("unsupported", "no evidence was given") for _ in claims]
        variables = {"claims": numbered("CLAIM", claims), "evidence": numbered("EVIDENCE", evidence),
                     "question": block("QUESTION", question) if question else "",
                     "n_claims": len(claims), "n_evidence": len(evidence),
                     "claims_list": list(claims), "evidence_list": list(evidence)}
        return await self._run(steps.VERIFY, variables, (len(claims), len(evidence)), trace)

    async def attribute(self, claims: list[str], chunks: list[str], trace: GraderTrace) -> list[list[bool]]:
        if not claims or not chunks:
            return [[] for _ in claims]
        variables = {"claims": numbered("CLAIM", claims), "chunks": numbered("CHUNK", chunks),
                     "n_claims": len(claims), "n_chunks": len(chunks),
                     "claims_list": list(claims), "chunks_list": list(chunks)}
        return await self._run(steps.ATTRIBUTE, variables, (len(claims), len(chunks)), trace)

    async def classify_chunks(self, query: str, output: str, chunks: list[str],
                              trace: GraderTrace) -> ChunkRelevance:
        if not chunks:
            return ChunkRelevance(())
        variables = {"query": block("QUERY", query), "output": block("ANSWER", output),
                     "chunks": numbered("CHUNK", chunks), "n_chunks": len(chunks), "chunks_list": list(chunks)}
        return await self._run(steps.CLASSIFY, variables, (len(chunks),), trace)

    async def judge(self, prompt: str, schema: dict[str, Any], trace: GraderTrace, *,
                    step: str = "judge") -> dict[str, Any]:
        return await self._ask(step, _as_messages(prompt, steps.builtin_template("system").strip()), schema, trace)

    # ------------------------------------------------------------ machinery
    async def _run(self, step: steps.Step[R], variables: dict[str, Any], sizes: tuple[int, ...],
                   trace: GraderTrace) -> R:
        return await steps.ask(self, step, variables, trace, schema_args=sizes, override=self._prompts.get(step.name),
                               extra=self._extra)

    async def _ask(self, step: str, messages: Messages, schema: dict[str, Any],
                   trace: GraderTrace) -> dict[str, Any]:
        out = await self._call(step, messages, schema, trace)
        data, error = parse_reply(out.text, schema)
        if data is None:
            repair = templating.render(steps.builtin_template("repair"), {"error": error, "schema": json.dumps(schema)})
            messages = [*messages, {"role": "assistant", "content": out.text or ""},
                        {"role": "user", "content": repair}]
            out = await self._call(step, messages, schema, trace, repair=True)
            data, error = parse_reply(out.text, schema)
        if data is None:
            raise GraderError(f"grader reply for step {step!r} is invalid after one repair attempt: {error}",
                              raw=out.text)
        return data

    async def _call(self, step: str, messages: Messages, schema: dict[str, Any], trace: GraderTrace, *,
                    repair: bool = False) -> Output:
        label = f"{step}:repair" if repair else step
        while True:
            level = self._format["level"]
            params = dict(self._params)
            msgs = messages
            if level == 0:
                params["response_format"] = {"type": "json_schema", "json_schema": {
                    "name": f"evalrun_{step}", "schema": schema, "strict": True}}
            elif level == 1:  # JSON mode constrained by the schema (llama.cpp's server: a grammar from it)
                params["response_format"] = {"type": "json_object", "schema": schema}
            else:
                if level == 2:
                    params["response_format"] = {"type": "json_object"}
                hint = templating.render(steps.builtin_template("json_mode"), {"schema": json.dumps(schema)})
                msgs = [*messages[:-1], {**messages[-1], "content": str(messages[-1].get("content", "")) + hint}]
            try:
                out = await self._transport.chat(self.model, msgs, params)
            except ProviderError as e:
                if level < _LEVELS - 1 and _UNSUPPORTED_FORMAT.search(str(e)):
                    self._format["level"] = level + 1  # the model rejects this response_format: step down
                    continue
                trace.calls.append(GraderCall(label, None))
                raise GraderError(f"grader call for step {step!r} failed: {e}", raw=None) from None
            trace.calls.append(GraderCall(label, out.text, cached=out.cached, tokens=out.tokens, cost=out.cost,
                                          latency_ms=out.latency_ms))
            return out
