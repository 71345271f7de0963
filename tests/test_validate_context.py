"""A graded assertion that can never have context is a config error at its line, before any case runs; where
context may come at run time (contextTransform over the provider's metadata, transformVars, a stored output)
the config stays valid."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from evalrun.cli import main

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def _validate(tmp_path: Path, text: str, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str]:
    cfg = tmp_path / "c.yaml"
    cfg.write_text(textwrap.dedent(text))
    capsys.readouterr()
    code = main(["validate", str(cfg), *extra])
    return code, capsys.readouterr().err


@pytest.mark.parametrize("type_", ["faithfulness", "context-faithfulness", "hallucination", "context-relevance",
                                   "context-recall", "context-precision"])
def test_a_graded_assertion_without_any_context_is_an_error_at_its_line(
        tmp_path: Path, type_: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, err = _validate(tmp_path, f"""
        prompts: ['{{{{query}}}}']
        providers: [echo]
        tests:
          - vars: {{query: How long do refunds take?}}
            assert:
              - type: contains
                value: days
              - type: {type_}
                value: Refunds take 30 days.
        """, capsys)
    assert code == 2
    assert f"c.yaml:9: tests[0].assert[1]: {type_} has no context" in err
    assert "contextTransform" in err and "metadata']['retrieved']" in err


def test_noise_sensitivity_errors_only_where_a_chunk_is_needed(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = """
        prompts: ['{{query}}']
        providers: [echo]
        tests:
          - vars: {query: q}
            assert:
              - type: noise-sensitivity
                value: Refunds take 30 days.
        """
    assert _validate(tmp_path, base, capsys)[0] == 0  # the default mode counts wrong claims without chunks
    code, err = _validate(tmp_path, base + "        config: {mode: irrelevant}\n", capsys)
    assert code == 2 and "c.yaml:7: tests[0].assert[0]: noise-sensitivity has no context" in err
    code, err = _validate(tmp_path, base + "        config: {formula: ragas}\n", capsys)
    assert code == 2
    noise = base + "        config: {mode: irrelevant, noiseContext: Refunds take 90 days.}\n"
    assert _validate(tmp_path, noise, capsys)[0] == 0


@pytest.mark.parametrize("where", [
    "defaultTest: {vars: {context: Refunds take 30 days.}}",
    "defaultTest: {options: {transformVars: \"{**vars, 'context': 'x'}\"}}",
])
def test_context_from_default_test_or_run_time_vars_is_enough(
        tmp_path: Path, where: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, err = _validate(tmp_path, f"""
        prompts: ['{{{{query}}}}']
        providers: [echo]
        {where}
        tests:
          - vars: {{query: q}}
            assert: [{{type: faithfulness}}]
        """, capsys)
    assert code == 0, err


def test_context_from_the_command_line_a_transform_or_a_stored_output(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plain = """
        prompts: ['{{query}}']
        providers: [echo]
        tests:
          - vars: {query: q}
            assert: [{type: faithfulness}]
        """
    assert _validate(tmp_path, plain, capsys)[0] == 2
    assert _validate(tmp_path, plain, capsys, "--var", "context=Refunds take 30 days.")[0] == 0
    transform = plain.replace("{type: faithfulness}", "{type: faithfulness, contextTransform: \"output\"}")
    assert _validate(tmp_path, transform, capsys)[0] == 0
    stored = plain.replace("tests:\n", "tests:\n          - vars: {query: ctx}\n"
                                       "            options: {storeOutputAs: context}\n")
    assert _validate(tmp_path, stored, capsys)[0] == 0


def test_one_default_assertion_without_context_for_40_rows_is_one_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with open(tmp_path / "rows.jsonl", "w") as f:
        for i in range(40):
            f.write(json.dumps({"vars": {"query": f"q{i}"}}) + "\n")
    code, err = _validate(tmp_path, """
        prompts: ['{{query}}']
        providers: [echo]
        defaultTest:
          assert:
            - type: context-relevance
        tests: file://rows.jsonl
        """, capsys)
    assert code == 2 and err.count("has no context") == 1
    assert "c.yaml:6: defaultTest.assert[0]: context-relevance has no context" in err
    assert "used by the test at " in err and "and 39 more tests: " in err and "40 errors" in err


def test_the_rag_app_example_reads_context_from_its_provider_and_validates(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(EXAMPLES / "rag-app" / "evalrun.yaml")]) == 0
