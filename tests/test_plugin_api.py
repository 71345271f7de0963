"""The public plugin API: the graded plugin example of docs/metrics.md runs as written, duplicate type names
are errors naming both sources, and the built-in modules are the single list in the registry."""

from __future__ import annotations

import re
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Any

import pytest

from evalrun.assertions import registry
from evalrun.errors import ConfigError
from evalrun.types import AssertionSpec
from tests.fakeserver import FakeOpenAI
from tests.graderfakes import evaluate, make_grader, route, user_text

DOC = Path(__file__).resolve().parent.parent / "docs" / "metrics.md"


def _doc_plugin() -> dict[str, Any]:
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index("## Adding a judge-style metric"):]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    assert code is not None
    namespace: dict[str, Any] = {}
    exec(compile(code.group(1), str(DOC), "exec"), namespace)  # noqa: S102 - the documented example itself
    return namespace


@pytest.fixture
def isolated_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    registry.load_all()
    monkeypatch.setitem(registry.__dict__, "_REGISTRY", dict(registry._REGISTRY))
    monkeypatch.setitem(registry.__dict__, "_PLUGINS", {})


def test_documented_graded_plugin_runs_and_needs_a_model(fake_openai: FakeOpenAI, isolated_registry: None) -> None:
    ns = _doc_plugin()
    registry.register("is-polite")(ns["IsPolite"])
    route(fake_openai, judge={"polite": True, "reason": "thanks the user"})
    spec = AssertionSpec(type="is-polite", key_path="tests[0].assert[0]")
    r = evaluate(spec, "Thank you!", {}, make_grader(fake_openai))
    assert r.pass_ and r.score == 1.0 and r.reason.startswith("thanks the user")
    assert user_text(fake_openai.requests[0]).startswith("Is this reply polite?\n\n<<<OUTPUT>>>\nThank you!")
    from evalrun.grading.builtin import BuiltinGrader

    assert not BuiltinGrader().supports(ns["POLITENESS"])
    refused = evaluate(spec, "Thank you!", {}, BuiltinGrader())
    assert refused.error is not None and "the builtin grader cannot grade is-polite" in refused.error


def test_a_builtin_name_registered_twice_names_both_sources(isolated_registry: None) -> None:
    from evalrun.assertions import Assertion

    class Contains(Assertion):
        """Another contains."""

    with pytest.raises(registry.DuplicateTypeError, match=r"'contains' is registered twice: by "
                       r"evalrun.assertions.text:Contains and by tests.test_plugin_api:.*Contains"):
        registry.register("contains")(Contains)


def test_a_plugin_reusing_a_taken_name_is_a_config_error(monkeypatch: pytest.MonkeyPatch,
                                                         isolated_registry: None) -> None:
    plugin_src = Path(__file__).resolve().parent.parent / "examples" / "plugin-example" / "src"
    monkeypatch.syspath_prepend(str(plugin_src))
    ep = EntryPoint("contains", "evalrun_plugin_example:IsPalindrome", "evalrun.assertions")
    monkeypatch.setattr("importlib.metadata.entry_points", lambda group: [ep] if group == ep.group else [])
    with pytest.raises(ConfigError) as e:
        registry._load_plugins()
    msg = str(e.value)
    assert "'contains' is defined twice" in msg and "evalrun_plugin_example:IsPalindrome" in msg
    assert "evalrun.assertions.text:Contains" in msg


def test_the_example_packages_judge_style_plugin(monkeypatch: pytest.MonkeyPatch, fake_openai: FakeOpenAI,
                                                 isolated_registry: None, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """examples/plugin-example's is-polite: one handler, one template (a package file), one formula, through
    its entry point; graded by an LLM grader, refused by validate with the builtin grader."""
    example = Path(__file__).resolve().parent.parent / "examples" / "plugin-example"
    monkeypatch.syspath_prepend(str(example / "src"))
    ep = EntryPoint("is-polite", "evalrun_plugin_example.polite:IsPolite", "evalrun.assertions")
    monkeypatch.setattr("importlib.metadata.entry_points", lambda group: [ep] if group == ep.group else [])
    registry._load_plugins()
    from evalrun_plugin_example import polite  # type: ignore[import-not-found]

    assert [polite.politeness_score(polite.Politeness(r, "")) for r in (1, 3, 5)] == [0.0, 0.5, 1.0]
    route(fake_openai, judge={"rating": 4, "reason": "warm and helpful"})
    spec = AssertionSpec(type="is-polite", threshold=0.75, key_path="tests[0].assert[0]")
    r = evaluate(spec, "Thank you for asking!", {}, make_grader(fake_openai))
    assert r.pass_ and r.score == 0.75 and r.reason == "rated 4/5: warm and helpful (0.75 >= threshold 0.75)"
    prompt = user_text(fake_openai.requests[0])
    assert prompt.startswith("Rate how polite this reply is") and "<<<OUTPUT>>>\nThank you for asking!" in prompt
    from evalrun.cli import main

    monkeypatch.delenv("OPENAI_API_KEY")  # with it, promptfoo's default grader would grade (as in promptfoo)
    assert main(["validate", str(example / "polite.yaml")]) == 2
    assert "the builtin grader cannot grade is-polite" in capsys.readouterr().err
    monkeypatch.setenv("EVALRUN_GRADER", "openai:gpt-4o-mini")
    assert main(["validate", str(example / "polite.yaml")]) == 0


def test_every_handler_module_is_in_the_one_list() -> None:
    import pkgutil

    import evalrun.assertions as pkg

    registry.load_all()
    registering = {m for _, m, _ in pkgutil.iter_modules(pkg.__path__)
                   if "@register(" in (Path(pkg.__path__[0]) / f"{m}.py").read_text(encoding="utf-8")}
    assert {f"evalrun.assertions.{m}" for m in registering} == set(registry.BUILTIN_MODULES)


def test_a_third_party_grader_of_the_wrong_shape_is_an_error() -> None:
    """The Step objects check every grader's pipeline results (here: one verdict for two claims)."""
    from evalrun.types import ChunkRelevance, GraderTrace, Verdict

    class Sloppy:
        id = "sloppy"
        description = "a plugin grader"

        async def extract_claims(self, text: str, trace: GraderTrace, *, question: str | None = None) -> list[str]:
            return ["Paris is in France.", "Paris has 2 million people."]

        async def verify(self, claims: list[str], evidence: list[str], trace: GraderTrace, *,
                         question: str | None = None) -> list[Verdict]:
            return [Verdict("supported")]

        async def attribute(self, claims: list[str], chunks: list[str], trace: GraderTrace) -> list[list[bool]]:
            return []

        async def classify_chunks(self, query: str, output: str, chunks: list[str],
                                  trace: GraderTrace) -> ChunkRelevance:
            return ChunkRelevance(())

        async def judge(self, prompt: str, schema: dict[str, Any], trace: GraderTrace, *,
                        step: str = "judge") -> dict[str, Any]:
            raise AssertionError("not called")

    spec = AssertionSpec(type="faithfulness", key_path="tests[0].assert[0]")
    r = evaluate(spec, "Paris is in France. It has 2 million people.", {"context": "Paris is in France."},
                 Sloppy())
    assert r.error is not None and "verify: grader returned 1 item(s) for 2" in r.error
