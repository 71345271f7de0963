"""Helpers for the run-engine tests: small suites built in code (no YAML), with real assertion handlers."""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Iterator
from typing import Any

from evalrun import types as T
from evalrun.assertions import engine
from evalrun.providers.base import CallContext
from evalrun.types import AssertionSpec, Case, Messages, Output, PromptSpec, ProviderSpec, Suite


def check(type_: str, value: Any = None, **kw: Any) -> AssertionSpec:
    negate = type_.startswith("not-")
    spec = AssertionSpec(type=type_.removeprefix("not-"), negate=negate, value=value, **kw)
    return _with_handler(spec)


def _with_handler(spec: AssertionSpec) -> AssertionSpec:
    handler = engine.build(spec)
    object.__setattr__(spec, "handler", handler)
    return spec


def make_test(index: int, vars: dict[str, Any], *asserts: AssertionSpec, description: str | None = None,
              **kw: Any) -> T.TestSpec:
    return T.TestSpec(index=index, description=description, vars=vars, asserts=tuple(asserts),
                    key_path=f"tests[{index}]", **kw)


def suite(tests: list[T.TestSpec], providers: tuple[ProviderSpec, ...] = (ProviderSpec("echo"),),
          prompts: tuple[str, ...] = ("{{q}}",), base_dir: str = ".") -> Suite:
    ps = tuple(PromptSpec(raw=p, label=p, id=f"p{i}") for i, p in enumerate(prompts))
    return Suite(description="test suite", prompts=ps, providers=providers, tests=tuple(tests), files=("x.yaml",),
                 base_dir=base_dir)


def simple_cases(s: Suite, repeat: int = 1) -> Iterator[Case]:
    """tests x repeat x providers x prompts (no var expansion), ids hashed like the real expansion."""
    index = 0
    for test, r in itertools.product(s.tests, range(repeat)):
        for provider, prompt in itertools.product(s.providers, s.prompts):
            raw = json.dumps([test.index, test.vars, provider.id, prompt.id, r], sort_keys=True, default=str)
            yield Case(id=hashlib.sha1(raw.encode()).hexdigest()[:16], index=index, test=test, vars=test.vars,
                       provider=provider, prompt=prompt, repeat=r)
            index += 1


class ScriptedProvider:
    """A provider whose reply is computed from the prompt; records concurrency and calls."""

    def __init__(self, spec: ProviderSpec, reply: Any = None, delay: float = 0.0) -> None:
        self.id = spec.id
        self.label = spec.name
        self.reply = reply or (lambda prompt: prompt)
        self.delay = delay
        self.calls: list[Any] = []
        self.inflight = 0
        self.max_inflight = 0

    async def call(self, prompt: str | Messages, ctx: CallContext) -> Output:
        import asyncio

        self.calls.append(prompt)
        self.inflight += 1
        self.max_inflight = max(self.max_inflight, self.inflight)
        try:
            if self.delay:
                await asyncio.sleep(self.delay)
            value = self.reply(prompt)
            if isinstance(value, Exception):
                raise value
            return value if isinstance(value, Output) else Output(text=str(value), latency_ms=1.0)
        finally:
            self.inflight -= 1
