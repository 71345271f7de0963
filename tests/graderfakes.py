"""Helpers for grader and graded-assertion tests: an LLM grader on the fake server, a step router, a case."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from evalrun.assertions import engine
from evalrun.assertions.base import AssertionContext
from evalrun.grading.llm import LLMGrader
from evalrun.providers.litellm_ import LLMTransport
from evalrun.types import AssertionResult, AssertionSpec, Case, Output, PromptSpec, ProviderSpec, TestSpec
from tests.fakeserver import FakeOpenAI

MODEL = "openai/fake-model"


def make_grader(fake: FakeOpenAI, *, use_cache: bool = True, **params: Any) -> LLMGrader:
    """An LLMGrader talking to the fake server through the real transport (litellm)."""
    transport = LLMTransport(max_concurrency=8, use_cache=use_cache)
    return LLMGrader(MODEL, transport, grader_id="openai:fake-model",
                     params={"api_base": fake.url, "api_key": "sk-test", **params})


def step_of(body: dict[str, Any]) -> str:
    """The pipeline step a request is for (from the json_schema name, or 'json_object')."""
    fmt = body.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        return str(fmt["json_schema"]["name"]).removeprefix("evalrun_")
    return str(fmt.get("type", "none"))


def user_text(body: dict[str, Any]) -> str:
    """The last user message of a request."""
    return next(m["content"] for m in reversed(body["messages"]) if m["role"] == "user")


Handler = Callable[[dict[str, Any]], Any]


def route(fake: FakeOpenAI, **steps: Any) -> None:
    """Answer each step with a fixed JSON object, or with handler(body) -> JSON object."""

    def reply(body: dict[str, Any]) -> dict[str, Any]:
        answer = steps.get(step_of(body))
        if answer is None:
            return {"status": 500, "body": {"error": {"message": f"no scripted reply for {step_of(body)}"}}}
        content = answer(body) if callable(answer) else answer
        return {"content": content if isinstance(content, str) else json.dumps(content)}

    fake.default = reply


def steps_called(fake: FakeOpenAI) -> list[str]:
    return sorted(step_of(b) for b in fake.requests)


def make_case(vars: dict[str, Any]) -> Case:
    test = TestSpec(index=0, description="t", vars=vars, asserts=())
    return Case(id="c0", index=0, test=test, vars=vars, provider=ProviderSpec(id="echo"),
                prompt=PromptSpec(raw="{{query}}", label="p", id="p"))


def evaluate(spec: AssertionSpec, output: str, vars: dict[str, Any], grader: Any,
             metadata: dict[str, Any] | None = None) -> AssertionResult:
    """Build the handler and evaluate it for one case with `grader` (config/value used as given)."""
    handler = engine.build(spec)
    spec = AssertionSpec(**{**{f: getattr(spec, f) for f in spec.__dataclass_fields__}, "handler": handler})
    ctx = AssertionContext(output=output, response=Output(text=output, metadata=metadata or {}), vars=vars,
                           prompt="", case=make_case(vars), value=spec.value, config=dict(spec.config),
                           get_grader=lambda _s: grader)
    return asyncio.run(engine.evaluate(spec, ctx))
