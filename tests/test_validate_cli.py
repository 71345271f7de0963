"""`evalrun validate`: summary, --json, exit codes, and no litellm import."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from evalrun.cli import main

CONFIG = """
    description: demo
    grader: openai:gpt-4o-mini
    prompts: ['Q: {{q}}', 'Answer briefly: {{q}}']
    providers: [echo, {id: openai:gpt-4o-mini, label: mini}]
    defaultTest:
      assert:
        - type: faithfulness
          threshold: 0.7
    tests:
      - vars: {q: [a, b, c], context: ctx}
        assert:
          - type: contains
            value: a
      - vars: {q: d, context: ctx}
        assert:
          - type: assert-set
            assert:
              - {type: not-icontains, value: x}
              - {type: llm-rubric, value: polite}
"""


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "evalrun.yaml"
    path.write_text(textwrap.dedent(CONFIG), encoding="utf-8")
    return path


def test_json_summary(config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "--json", str(config)]) == 0
    s = json.loads(capsys.readouterr().out)
    assert (s["prompts"], s["providers"], s["tests"], s["cases"]) == (2, 2, 2, 16)
    assert s["assertions_by_type"] == {"assert-set": 1, "contains": 1, "faithfulness": 2, "llm-rubric": 1,
                                       "not-icontains": 1}
    assert s["assertions"] == 6 and s["graded_assertions"] == 3
    assert s["graded_evaluations"] == 12 + 4 + 4  # faithfulness on every case, llm-rubric on test 2's
    assert all(isinstance(s[k], int) for k in ("prompts", "providers", "tests", "cases"))


def test_the_collector_is_left_as_found(config: Path, tmp_path: Path) -> None:
    """validate runs with the cyclic collector off while loading and freezes the loaded suite; it gives the
    collector back in the state it found it (on or off), on success and on a config error alike."""
    import gc

    bad = tmp_path / "bad.yaml"
    bad.write_text("prompts: ['{{q}}']\nproviders: [echo]\ntests: [{vars: {q: 1}, assert: [{type: nope}]}]\n")
    was = gc.isenabled()
    try:
        for enabled in (True, False):
            (gc.enable if enabled else gc.disable)()
            assert main(["validate", str(config)]) == 0
            assert gc.isenabled() is enabled
            assert main(["validate", str(bad)]) == 2
            assert gc.isenabled() is enabled
    finally:
        gc.unfreeze()
        (gc.enable if was else gc.disable)()


def test_human_summary(config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(config), "--var", "extra=1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("config OK: ") and "(demo)" in out
    assert "cases             16" in out and "faithfulness 2" in out and "echo, mini" in out


def test_default_config_in_current_folder(config: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(config.parent)
    assert main(["validate", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["files"] == ["evalrun.yaml"]


def test_usage_errors_exit_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, config: Path,
                             capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty_dir"
    empty.mkdir()
    monkeypatch.chdir(empty)
    assert main(["validate"]) == 2
    assert "no config given" in capsys.readouterr().err
    assert main(["validate", str(config), "--var", "novalue"]) == 2
    assert "is not KEY=VALUE" in capsys.readouterr().err
    assert main(["validate", "missing.yaml"]) == 2
    assert "config file not found: missing.yaml" in capsys.readouterr().err


def test_validate_never_imports_litellm(config: Path) -> None:
    code = ("import sys, io, contextlib\nfrom evalrun.cli import main\nbuf = io.StringIO()\n"
            "with contextlib.redirect_stdout(buf):\n"
            f"    rc = main(['validate', {str(config)!r}])\n"
            "print(rc, 'litellm' in sys.modules, any(m.startswith('litellm') for m in sys.modules))\n")
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.split() == ["0", "False", "False"]


def test_console_script_end_to_end(config: Path) -> None:
    exe = Path(sys.executable).parent / "evalrun"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "evalrun"]
    proc = subprocess.run([*cmd, "validate", "--json", str(config)], capture_output=True, text=True)
    assert proc.returncode == 0 and json.loads(proc.stdout)["cases"] == 16


def test_bad_provider_id_is_reported_without_calling_anything(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("prompts: ['x']\nproviders:\n  - echo\n  - opnai:gpt-4o-mini\n", encoding="utf-8")
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}:4:" in err and "unknown provider prefix 'opnai'" in err


def test_graders_are_named_and_malformed_grader_specs_rejected(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(textwrap.dedent("""
        prompts: ['{{q}}']
        providers: [echo]
        grader: openai:gpt-4o-mini
        tests:
          - vars: {q: a, context: c}
            assert:
              - type: faithfulness
              - type: llm-rubric
                value: polite
                provider: {id: ollama:chat:llama3, label: local}
        """), encoding="utf-8")
    assert main(["validate", "--json", str(path)]) == 0
    graders = json.loads(capsys.readouterr().out)["graders"]
    assert graders == ["openai:gpt-4o-mini (config grader)", "local (assertion provider)"]
    path.write_text(path.read_text().replace("{id: ollama:chat:llama3, label: local}", "{idd: x}"))
    assert main(["validate", str(path)]) == 2
    assert f"{path}:11: tests[0].assert[1].provider: grader provider object needs a string `id`" in \
        capsys.readouterr().err


def test_malformed_grader_model_id_is_reported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("prompts: ['{{q}}']\nproviders: [echo]\ngrader: opnai:gpt-4o-mini\n"
                    "tests:\n  - vars: {q: a, context: c}\n    assert:\n      - type: faithfulness\n",
                    encoding="utf-8")
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}: grader: " in err and "unknown provider prefix 'opnai'" in err


def test_tests_that_run_no_case_are_warned_about(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(textwrap.dedent("""
        prompts: [{raw: 'A', label: a}, {raw: 'B', label: b}]
        providers: [{id: echo, label: only-a, prompts: [a]}]
        tests:
          - description: fine
          - description: excluded
            prompts: [b]
        """), encoding="utf-8")
    assert main(["validate", "--json", str(path)]) == 0
    s = json.loads(capsys.readouterr().out)
    assert s["cases"] == 1 and len(s["warnings"]) == 1
    assert s["warnings"][0].startswith(f"{path}:6: tests[1] ('excluded') runs no case")
    assert main(["validate", str(path)]) == 0
    assert "  warning: " in capsys.readouterr().out


def test_a_streamed_file_is_read_once_and_summarised_as_a_walk_would(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    from evalrun import config as config_pkg
    from evalrun.commands.validate import summarize
    from evalrun.config.tests import TestFile

    rows = [{"vars": {"q": ["a", "b"] if i % 3 == 0 else f"q{i}", "context": "ctx"},
             "assert": [{"type": "contains", "value": "q"}, {"type": "faithfulness"}] if i % 2 else
             [{"type": "icontains", "value": f"{i}"}], **({"providers": ["echo"]} if i == 4 else {})}
            for i in range(9)]
    (tmp_path / "t.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    path = tmp_path / "c.yaml"
    path.write_text(textwrap.dedent(CONFIG).split("tests:")[0] + "tests: file://t.jsonl\n", encoding="utf-8")
    passes: list[int] = []
    real = TestFile._parts

    def counted(self: TestFile, skip: int = 0) -> object:
        passes.append(1)
        return real(self, skip)

    monkeypatch.setattr(TestFile, "_parts", counted)
    assert main(["validate", "--json", str(path)]) == 0
    assert len(passes) == 1
    s = json.loads(capsys.readouterr().out)
    walked = summarize(config_pkg.load([str(path)]))
    assert {k: s[k] for k in walked if k != "warnings"} == {k: v for k, v in walked.items() if k != "warnings"}
    assert s["cases"] == 2 * 2 * (9 + 3) - 2 * 2 + 2 and s["graded_assertions"] == 9 + 4
