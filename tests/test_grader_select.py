"""Grader selection: promptfoo's order, spec forms, one grader per distinct spec, describing without a transport."""

from __future__ import annotations

from typing import Any

import pytest

from evalrun.errors import ConfigError, GraderError
from evalrun.grading.llm import LLMGrader
from evalrun.grading.select import BUILTIN, GraderResolver, normalise_spec
from evalrun.types import AssertionSpec, Suite
from evalrun.types import TestSpec as TSpec


def suite(grader: Any = None) -> Suite:
    return Suite(description=None, prompts=(), providers=(), tests=(), files=("c.yaml",), grader=grader)


def tspec(provider: Any = None) -> TSpec:
    return TSpec(index=0, description=None, vars={}, asserts=(),
                    options={"provider": provider} if provider is not None else {})


def aspec(provider: Any = None) -> AssertionSpec:
    return AssertionSpec(type="faithfulness", provider=provider)


class FakeTransport:
    async def chat(self, model: str, messages: list[dict[str, Any]], params: dict[str, Any]) -> Any:
        raise AssertionError("not called")


@pytest.mark.parametrize("assertion,test,cli,env,config,expected", [
    ("openai:a", "openai:b", "openai:c", "openai:d", "openai:e", "openai:a"),
    (None, "openai:b", "openai:c", "openai:d", "openai:e", "openai:b"),
    (None, None, "openai:c", "openai:d", "openai:e", "openai:c"),
    (None, None, None, "openai:d", "openai:e", "openai:d"),
    (None, None, None, None, "openai:e", "openai:e"),
    (None, None, None, None, None, "builtin"),
    ("builtin", "openai:b", None, None, None, "builtin"),
    (None, "openai:b", "builtin", None, None, "openai:b"),
])
def test_precedence(monkeypatch: pytest.MonkeyPatch, assertion: Any, test: Any, cli: Any, env: Any,
                    config: Any, expected: str) -> None:
    if env:
        monkeypatch.setenv("EVALRUN_GRADER", env)
    resolver = GraderResolver(suite(config), cli, FakeTransport())
    grader = resolver.resolve(aspec(assertion), tspec(test))
    assert grader.id == expected
    assert [d.split(" (")[0] for d in resolver.descriptions()] == [expected]


def test_llm_grader_gets_litellm_model_and_params() -> None:
    resolver = GraderResolver(suite(), None, FakeTransport())
    spec = {"id": "openai:chat:gpt-4o-mini", "label": "judge",
            "config": {"apiBaseUrl": "http://127.0.0.1:1/v1", "apiKey": "k", "temperature": 0.2}}
    grader = resolver.resolve(aspec(spec), tspec())
    assert isinstance(grader, LLMGrader)
    assert grader.id == "judge" and grader.model == "openai/gpt-4o-mini"
    assert grader._params == {"temperature": 0.2, "api_base": "http://127.0.0.1:1/v1", "api_key": "k"}


def test_one_grader_per_distinct_spec() -> None:
    resolver = GraderResolver(suite(), None, FakeTransport())
    a = resolver.resolve(aspec("openai:x"), tspec())
    b = resolver.resolve(aspec(None), tspec("openai:x"))
    c = resolver.resolve(aspec({"id": "openai:x", "config": {"temperature": 1}}), tspec())
    d = resolver.resolve(aspec(None), tspec())
    assert a is b and a is not c
    assert d is resolver.resolve(aspec("builtin"), tspec())
    assert [d.split(" (")[0] for d in resolver.descriptions()] == ["openai:x", "builtin"]


def test_promptfoo_provider_map_uses_text_entry() -> None:
    resolver = GraderResolver(suite(), None, FakeTransport())
    grader = resolver.resolve(aspec(None), tspec({"text": "openai:t", "embedding": "openai:e"}))
    assert grader.id == "openai:t"


def test_without_transport_builtin_still_resolves_and_llm_cannot_call() -> None:
    import asyncio

    from evalrun.types import GraderTrace

    resolver = GraderResolver(None, None, None)
    assert resolver.resolve(aspec(), tspec()).id == BUILTIN
    llm = resolver.resolve(aspec("openai:x"), tspec())
    assert llm.id == "openai:x"
    with pytest.raises(GraderError):
        asyncio.run(llm.extract_claims("x", GraderTrace("openai:x")))


@pytest.mark.parametrize("spec,message", [
    (3, "id string or an object"),
    ("  ", "empty grader id"),
    ({"config": {}}, "string `id`"),
    ({"id": "openai:x", "confg": {}}, "unknown key"),
    ({"id": "openai:x", "config": "t"}, "must be a mapping"),
    ({"embedding": "openai:e"}, "no `text` entry"),
])
def test_bad_specs_are_config_errors(spec: Any, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        normalise_spec(spec, key="tests[0].assert[0].provider")


def test_builtin_object_form() -> None:
    assert normalise_spec({"id": "builtin"}) == BUILTIN


def test_bad_grader_ids_fail_before_any_call(tmp_path: Any) -> None:
    """A malformed grader id is a usage/config error when the run starts, not an ERROR per case."""
    from evalrun.api import evaluate
    from evalrun.errors import UsageError

    cfg = tmp_path / "c.yaml"
    cfg.write_text('prompts: ["{{a}}"]\nproviders: [echo]\ntests:\n  - vars: {a: x, context: x}\n'
                   "    assert:\n      - type: faithfulness\n")
    with pytest.raises(UsageError) as e:
        evaluate(cfg, grader="bad:::", results_file=tmp_path / "r.jsonl")
    assert e.value.key == "--grader" and "bad" in e.value.message
    assert not (tmp_path / "r.jsonl").exists() or not (tmp_path / "r.jsonl").read_text()

    cfg.write_text(cfg.read_text() + '        provider: "nope:::"\n')
    with pytest.raises(ConfigError) as e2:
        evaluate(cfg, results_file=tmp_path / "r.jsonl")
    assert (e2.value.line, e2.value.key) == (6, "tests[0].assert[0].provider")
    # a valid id is accepted without importing or calling anything at this stage
    cfg.write_text(cfg.read_text().replace("nope:::", "builtin"))
    assert evaluate(cfg, results_file=tmp_path / "r.jsonl").summary["errors"] == 0
