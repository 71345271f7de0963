"""`evalrun eval` end to end: YAML in, exit codes, outputs, dry run, resume, Ctrl-C, litellm via the fake server."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from evalrun.cli import main
from tests.fakeserver import FakeOpenAI

ROOT = Path(__file__).resolve().parents[1]

BASIC = """
description: cli test
providers: [echo]
prompts: ["Say {{q}}"]
tests:
  - vars: {q: hello}
    assert: [{type: contains, value: hello}]
  - description: wants zzz
    vars: {q: world}
    assert: [{type: contains, value: zzz}]
"""


def _write(tmp_path: Path, text: str, name: str = "evalrun.yaml") -> str:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return str(path)


def _eval(tmp_path: Path, *args: str) -> int:
    return main(["eval", "--no-progress-bar", "--results-file", str(tmp_path / "run.jsonl"), *args])


def test_exit_100_on_failure_and_outputs_written(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = _write(tmp_path, BASIC)
    out_json, out_xml = tmp_path / "r.json", tmp_path / "r.xml"
    assert _eval(tmp_path, cfg, "-o", str(out_json), "-o", str(out_xml)) == 100
    text = capsys.readouterr().out
    assert "[PASS] Say hello" in text and "[FAIL] " in text and "✗ contains: Output does not contain" in text
    assert "1 passed, 1 failed, 0 errors of 2 cases" in text
    data = json.loads(out_json.read_text())
    assert data["summary"]["total"] == 2 and data["meta"]["description"] == "cli test"
    assert out_xml.read_text().count("<testcase") == 2


def test_exit_0_when_all_pass_and_overrides(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = _write(tmp_path, BASIC)
    assert _eval(tmp_path, cfg, "--filter-first-n", "1", "--no-table") == 0
    assert _eval(tmp_path, cfg, "--pass-rate-threshold", "50", "--no-table") == 0
    assert _eval(tmp_path, cfg, "--pass-rate-threshold", "51", "--no-table") == 100
    monkeypatch.setenv("EVALRUN_FAILED_TEST_EXIT_CODE", "7")
    assert _eval(tmp_path, cfg, "--no-table") == 7


def test_config_and_usage_errors_exit_2_without_traceback(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    cfg = _write(tmp_path, BASIC.replace("type: contains, value: zzz", "type: contians, value: zzz"))
    assert _eval(tmp_path, cfg) == 2
    err = capsys.readouterr().err
    assert "contians" in err and "Traceback" not in err
    good = _write(tmp_path, BASIC, "good.yaml")
    assert _eval(tmp_path, good, "--var", "novalue") == 2
    assert _eval(tmp_path, good, "-o", "out.docx") == 2
    assert "unknown output format" in capsys.readouterr().err
    assert _eval(tmp_path, good, "-j", "0") == 2


def test_provider_errors_are_counted_apart(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "prov.py").write_text("def call_api(prompt, options, context):\n"
                                      "    if 'boom' in prompt:\n        raise RuntimeError('exploded')\n"
                                      "    return {'output': prompt}\n")
    cfg = _write(tmp_path, """
        providers: [file://prov.py]
        prompts: ["{{q}}"]
        tests:
          - vars: {q: [ok, boom]}
            assert: [{type: contains, value: o}]
    """)
    assert _eval(tmp_path, cfg) == 100
    out = capsys.readouterr().out
    assert "1 passed, 0 failed, 1 error of 2 cases" in out and "[ERROR] provider file://" in out
    errors = [json.loads(x) for x in (tmp_path / "run.jsonl").read_text().splitlines() if '"error"' in x]
    assert any("RuntimeError: exploded" in (r["error"] or "") for r in errors)


def test_dry_run_counts_calls_and_calls_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = _write(tmp_path, """
        providers: [echo]
        prompts: ["{{q}}", "again {{q}}"]
        tests:
          - vars: {q: [a, b, c], context: "a b c"}
            assert: [{type: contains, value: a}, {type: faithfulness}]
    """)
    assert _eval(tmp_path, cfg, "--dry-run") == 0
    out = capsys.readouterr().out
    assert "Dry run: 6 cases" in out and "Provider calls: 6" in out
    assert "faithfulness: " in out and "Grader calls (upper bound, before caching): " in out
    assert "Estimated provider cost: $0.0000" in out  # echo is free
    assert not (tmp_path / "run.jsonl").exists()


def test_dry_run_does_not_call_user_code_free(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "prov.py").write_text("def call_api(prompt, options, context):\n    return prompt\n")
    cfg = _write(tmp_path, """
        providers: [file://prov.py]
        prompts: ["{{q}}"]
        tests:
          - vars: {q: a}
    """)
    assert _eval(tmp_path, cfg, "--dry-run") == 0
    out = capsys.readouterr().out
    assert "Estimated provider cost: unknown" in out  # a python provider may call paid APIs


def test_resume_continues_without_repeating(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    calls = tmp_path / "calls.txt"
    (tmp_path / "prov.py").write_text(f"def call_api(prompt, options, context):\n"
                                      f"    open({str(calls)!r}, 'a').write(prompt + '\\n')\n"
                                      f"    return prompt\n")
    cfg = _write(tmp_path, """
        providers: [file://prov.py]
        prompts: ["{{q}}"]
        tests:
          - vars: {q: [a, b, c, d, e]}
            assert: [{type: contains, value: "{{q}}"}]
    """)
    assert _eval(tmp_path, cfg, "--filter-first-n", "2") == 0
    assert _eval(tmp_path, cfg, "--resume", "-o", str(tmp_path / "all.json")) == 0
    assert sorted(calls.read_text().split()) == ["a", "b", "c", "d", "e"]
    data = json.loads((tmp_path / "all.json").read_text())
    assert data["summary"]["total"] == 5 and data["summary"]["resumed"] == 2
    assert "2 resumed from the previous run" in capsys.readouterr().out


def test_resume_without_results_file_is_a_usage_error(tmp_path: Path) -> None:
    assert _eval(tmp_path, _write(tmp_path, BASIC), "--resume", str(tmp_path / "none.jsonl")) == 2


def test_litellm_provider_through_the_fake_server(tmp_path: Path, fake_openai: FakeOpenAI,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from evalrun import retry

    monkeypatch.setattr(retry, "BASE_DELAY", 0.01)
    fake_openai.script({"status": 429, "headers": {"Retry-After": "0"}}, {"content": "Paris", "usage": {
        "prompt_tokens": 7, "completion_tokens": 1, "total_tokens": 8}}, {"status": 400})
    cfg = _write(tmp_path, f"""
        providers:
          - id: openai:chat:fake-model
            config: {{apiBaseUrl: "{fake_openai.url}", temperature: 0}}
        prompts: ["Capital of {{{{country}}}}?"]
        tests:
          - vars: {{country: France}}
            assert: [{{type: equals, value: Paris}}]
          - vars: {{country: Spain}}
            assert: [{{type: equals, value: Madrid}}]
    """)
    assert _eval(tmp_path, cfg, "-j", "1", "--no-cache", "-o", str(tmp_path / "r.json")) == 100
    data = json.loads((tmp_path / "r.json").read_text())
    first, second = data["results"]
    assert first["status"] == "pass" and first["tokens"]["total"] == 8
    assert second["status"] == "error" and "400" in second["error"]
    assert data["summary"]["tokens"]["provider"]["total"] == 8
    assert fake_openai.requests[0]["messages"] == [{"role": "user", "content": "Capital of France?"}]


def _subprocess_env() -> dict[str, Any]:
    env = dict(os.environ)
    env.pop("CI", None)
    env["PYTHONPATH"] = str(ROOT)
    return env


def test_echo_run_never_imports_litellm(tmp_path: Path) -> None:
    """Not even with a graded assertion, as long as the builtin grader grades it."""
    cfg = _write(tmp_path, BASIC + """
  - vars: {q: Paris is in France., context: Paris is in France.}
    assert: [{type: faithfulness}]
""")
    code = ("import sys; from evalrun.cli import main; rc = main(['eval', sys.argv[1], '--no-table', "
            "'--no-progress-bar']); print('LITELLM', 'litellm' in sys.modules, rc)")
    out = subprocess.run([sys.executable, "-c", code, cfg], capture_output=True, text=True, cwd=tmp_path,
                         env=_subprocess_env(), timeout=60)
    assert "LITELLM False 100" in out.stdout, out.stderr


def test_ctrl_c_keeps_results_and_resume_finishes(tmp_path: Path) -> None:
    (tmp_path / "prov.py").write_text("import time\ndef call_api(prompt, options, context):\n"
                                      "    time.sleep(0.05)\n    return prompt\n")
    values = ", ".join(f"v{i}" for i in range(200))
    cfg = _write(tmp_path, "providers: [file://prov.py]\nprompts: ['{{q}}']\ntests:\n"
                           f"  - vars: {{q: [{values}]}}\n")
    cmd = [sys.executable, "-m", "evalrun", "eval", cfg, "--no-table", "--no-progress-bar", "-j", "2"]
    proc = subprocess.Popen(cmd, cwd=tmp_path, env=_subprocess_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    results = tmp_path / ".evalrun" / "last-run.jsonl"
    deadline = time.monotonic() + 120
    while not (results.exists() and results.stat().st_size):  # a first result: the run's Ctrl-C handler is set
        assert proc.poll() is None and time.monotonic() < deadline, "no result within 120 s"
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "Interrupted" in out and "Traceback" not in err
    done = len(results.read_text().splitlines())
    assert 0 < done < 200
    from evalrun.run.history import History

    [row] = History(tmp_path / ".evalrun").list()
    assert row.status == "interrupted" and row.summary is not None and row.summary["total"] == done
    again = subprocess.run(cmd + ["--resume"], cwd=tmp_path, env=_subprocess_env(), capture_output=True,
                           text=True, timeout=60)
    assert again.returncode == 0, again.stderr
    assert f"{done} resumed" in again.stdout and "200 passed" in again.stdout
    ids = [json.loads(line)["id"] for line in results.read_text().splitlines()]
    assert len(ids) == 200 == len(set(ids))
    [resumed] = History(tmp_path / ".evalrun").list()  # the same run, continued and finished
    assert resumed.id == row.id and resumed.status == "finished" and resumed.summary["total"] == 200


def test_python_api_evaluate(tmp_path: Path) -> None:
    from evalrun.api import evaluate

    cfg = _write(tmp_path, BASIC)
    outcome = evaluate(cfg, results_file=tmp_path / "api.jsonl", outputs=[str(tmp_path / "api.json")],
                       vars={"unused": "x"})
    assert (outcome.summary["passed"], outcome.summary["failed"]) == (1, 1)
    assert [r["status"] for r in outcome.iter_results()] == ["pass", "fail"]
    assert json.loads((tmp_path / "api.json").read_text())["summary"]["total"] == 2


def test_filter_failing_reads_a_json_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = _write(tmp_path, BASIC)
    report = tmp_path / "first.json"
    assert _eval(tmp_path, cfg, "-o", str(report)) == 100
    capsys.readouterr()
    assert _eval(tmp_path, cfg, "--filter-failing", str(report)) == 100
    out = capsys.readouterr().out
    assert "0 passed, 1 failed, 0 errors of 1 case " in out and "wants zzz" in out


def test_llm_grader_tokens_are_split_from_provider_tokens(tmp_path: Path, fake_openai: FakeOpenAI,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    fake_openai.script({"content": {"reason": "polite", "pass": True, "score": 0.9},
                        "usage": {"prompt_tokens": 30, "completion_tokens": 12, "total_tokens": 42}})
    cfg = _write(tmp_path, f"""
        providers: [echo]
        prompts: ["{{{{q}}}}"]
        tests:
          - vars: {{q: Hello there, how can I help?}}
            assert:
              - type: llm-rubric
                value: is polite
                provider: {{id: openai:chat:fake-model, config: {{apiBaseUrl: "{fake_openai.url}"}}}}
    """)
    assert _eval(tmp_path, cfg, "-o", str(tmp_path / "r.json")) == 0
    out = capsys.readouterr().out
    assert "Graded by " in out and "builtin" not in out.split("Graded by ")[1].splitlines()[0]
    summary = json.loads((tmp_path / "r.json").read_text())["summary"]
    assert summary["tokens"]["provider"]["total"] == 0 and summary["tokens"]["grader"]["total"] == 42
    assert summary["graders"] and len(fake_openai.requests) == 1


def test_sys_exit_in_user_code_is_a_case_error_and_the_run_continues(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "prov.py").write_text("import sys\ndef call_api(prompt, options, context):\n"
                                      "    if prompt == 'bye':\n        sys.exit(0)\n"
                                      "    if prompt == 'ki':\n        raise KeyboardInterrupt\n"
                                      "    if prompt == 'none':\n        return None\n"
                                      "    if prompt == 'none2':\n        return {'output': None}\n"
                                      "    return prompt\n")
    (tmp_path / "check.py").write_text("def get_assert(output, context):\n    exit(5)\n")
    cfg = _write(tmp_path, """
        providers: [file://prov.py]
        prompts: ["{{q}}"]
        tests:
          - vars: {q: bye}
          - vars: {q: ki}
          - vars: {q: none}
          - vars: {q: none2}
          - description: transform exits
            vars: {q: t}
            options: {transform: "exit()"}
          - description: inline python exits
            vars: {q: a}
            assert: [{type: python, value: "__import__('sys').exit(0)"}]
          - description: file python exits
            vars: {q: b}
            assert: [{type: python, value: "file://check.py"}]
          - vars: {q: fine}
            assert: [{type: contains, value: fine}]
    """)
    out_json = tmp_path / "out.json"
    assert _eval(tmp_path, cfg, "-o", str(out_json)) == 100
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    assert "1 passed, 0 failed, 7 errors of 8 cases" in captured.out
    errors = {r["vars"]["q"]: r["error"] for r in json.loads(out_json.read_text())["results"]
              if r["status"] == "error"}
    assert "user code called sys.exit(0)" in errors["bye"]
    assert "user code raised KeyboardInterrupt" in errors["ki"]
    assert "provider returned no output" in errors["none"] and "provider returned no output" in errors["none2"]
    assert "user code called sys.exit()" in errors["t"]
    assert "user code called sys.exit(0)" in errors["a"]
    assert "user code called sys.exit(5)" in errors["b"]


@pytest.mark.parametrize("name", ["EVALRUN_FAILED_TEST_EXIT_CODE", "EVALRUN_PASS_RATE_THRESHOLD"])
def test_bad_exit_code_env_is_a_usage_error_before_any_call(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], name: str) -> None:
    marker = tmp_path / "called"
    (tmp_path / "prov.py").write_text(f"def call_api(prompt, options, context):\n"
                                      f"    open({str(marker)!r}, 'a').write('x')\n    return prompt\n")
    cfg = _write(tmp_path, "providers: [file://prov.py]\nprompts: ['{{q}}']\ntests:\n  - vars: {q: a}\n")
    monkeypatch.setenv(name, "abc")
    assert _eval(tmp_path, cfg) == 2
    assert name in capsys.readouterr().err and not marker.exists()


def test_filter_failing_selects_by_id_not_by_equal_vars(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = _write(tmp_path, """
        providers: [echo]
        prompts: ["Say {{q}}"]
        tests:
          - description: passes
            vars: {q: hello}
            assert: [{type: contains, value: hello}]
          - description: fails with the same vars
            vars: {q: hello}
            assert: [{type: contains, value: zzz}]
    """)
    report = tmp_path / "first.json"
    assert _eval(tmp_path, cfg, "-o", str(report)) == 100
    capsys.readouterr()
    assert _eval(tmp_path, cfg, "--filter-failing", str(report)) == 100
    out = capsys.readouterr().out
    assert "0 passed, 1 failed, 0 errors of 1 case " in out


def test_filter_failing_with_an_unsupported_format_is_a_usage_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = _write(tmp_path, BASIC)
    report = tmp_path / "first.csv"
    assert _eval(tmp_path, cfg, "-o", str(report)) == 100
    capsys.readouterr()
    assert _eval(tmp_path, cfg, "--filter-failing", str(report)) == 2
    err = capsys.readouterr().err
    assert ".json" in err and ".jsonl" in err and "first.csv" in err


def test_filters_that_select_no_case_warn_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = _write(tmp_path, BASIC)
    assert _eval(tmp_path, cfg, "--filter-pattern", "nomatch") == 2
    assert "no case matched --filter-pattern 'nomatch'" in capsys.readouterr().err
    assert _eval(tmp_path, cfg, "--filter-pattern", "nomatch", "--dry-run") == 2
    assert "no case matched --filter-pattern 'nomatch'" in capsys.readouterr().err
    passing = tmp_path / "passing.json"
    passing.write_text(json.dumps({"results": [{"id": "nope", "status": "pass"}]}))
    assert _eval(tmp_path, cfg, "--filter-failing", str(passing)) == 2
    assert "no case matched --filter-failing" in capsys.readouterr().err
