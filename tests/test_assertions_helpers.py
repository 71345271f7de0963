"""Helpers shared by the assertion tests: build a spec, a case context, and run one assertion end to end."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

import pytest

from evalrun.assertions import engine
from evalrun.assertions.base import AssertionContext
from evalrun.errors import ConfigError, Location
from evalrun.types import AssertionResult, AssertionSpec, Case, Output, PromptSpec, ProviderSpec
from evalrun.types import TestSpec as _TestSpec

LOC = Location("suite.yaml", 7)


def spec(type_: str, value: Any = None, **kw: Any) -> AssertionSpec:
    """An AssertionSpec as the config loader makes it (`not-` prefix split off), with its handler built."""
    negate = type_.startswith("not-")
    s = AssertionSpec(type=type_[4:] if negate else type_, negate=negate, value=value, loc=LOC,
                      key_path="tests[0].assert[0]", **kw)
    return dataclasses.replace(s, handler=engine.build(s))


def context(output: str = "", value: Any = None, *, vars: dict[str, Any] | None = None,
            response: Output | None = None, provider: ProviderSpec | None = None,
            test: _TestSpec | None = None, config: dict[str, Any] | None = None) -> AssertionContext:
    test = test or _TestSpec(index=0, description="t", vars=vars or {}, asserts=())
    prov = provider or ProviderSpec(id="echo")
    prompt = PromptSpec(raw="{{q}}", label="p", id="p")
    case = Case(id="c1", index=0, test=test, vars=vars or {}, provider=prov, prompt=prompt)
    return AssertionContext(output=output, response=response or Output(text=output), vars=vars or {},
                            prompt="the prompt", case=case, value=value, config=config or {})


def run(type_: str, output: str, value: Any = None, *, ctx_kw: dict[str, Any] | None = None,
        **kw: Any) -> AssertionResult:
    """Build and evaluate one assertion on `output` (the value is passed as already rendered)."""
    s = spec(type_, value, **kw)
    return asyncio.run(engine.evaluate(s, context(output, value, **(ctx_kw or {}))))


def bad(type_: str, value: Any = None, **kw: Any) -> ConfigError:
    """The ConfigError raised while building an assertion with bad arguments."""
    with pytest.raises(ConfigError) as e:
        spec(type_, value, **kw)
    return e.value


def bad_yaml(raw: dict[str, Any]) -> ConfigError:
    """The ConfigError of one assertion as the config loader reads it (its keys as written in YAML)."""
    from evalrun.config.asserts import build

    with pytest.raises(ConfigError) as e:
        build(raw, base_dir=".", loc=LOC, key="tests[0].assert[0]")
    return e.value
