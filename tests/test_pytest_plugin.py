"""The pytest plugin (entry point pytest11): suites as pytest items, counts equal to `evalrun eval`.

Each test runs pytest (and `evalrun eval`) in a subprocess, as a user would: the plugin is loaded through its
installed entry point, not through a conftest.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures" / "pytest_plugin"
RAG_APP = ROOT / "examples" / "rag-app" / "evalrun.yaml"


def _pytest(args: list[str], cwd: Path, results_dir: Path) -> subprocess.CompletedProcess[str]:
    """pytest in `cwd` (the repository root brings its `addopts = -q`)."""
    cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-o", f"evalrun_results_dir={results_dir}",
           "-rA", *args]
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=120)


def _counts(stdout: str) -> dict[str, int]:
    last = [line for line in stdout.splitlines() if re.search(r"\d+ (passed|failed|error)", line)][-1]
    found = {m.group(2): int(m.group(1)) for m in re.finditer(r"(\d+) (passed|failed|errors?)", last)}
    return {"passed": found.get("passed", 0), "failed": found.get("failed", 0),
            "errors": found.get("error", 0) + found.get("errors", 0)}


def _eval_summary(suite: Path, tmp: Path) -> dict[str, int]:
    out = tmp / "eval.json"
    proc = subprocess.run([sys.executable, "-m", "evalrun", "eval", str(suite), "-o", str(out), "--no-table",
                           "--results-file", str(tmp / "eval.jsonl")], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode in (0, 100), proc.stderr
    s = json.loads(out.read_text())["summary"]
    return {"passed": s["passed"], "failed": s["failed"], "errors": s["errors"]}


def _results(results_dir: Path) -> list[dict[str, object]]:
    [path] = list(results_dir.glob("*.jsonl"))
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.mark.parametrize("suite", [RAG_APP, FIXTURES / "mixed.yaml"], ids=["rag-app", "mixed"])
def test_counts_equal_evalrun_eval(suite: Path, tmp_path: Path) -> None:
    proc = _pytest([str(suite)], ROOT, tmp_path / "res")
    counts = _counts(proc.stdout)
    assert counts == _eval_summary(suite, tmp_path), proc.stdout
    assert sum(counts.values()) == len(_results(tmp_path / "res"))  # one item per case, each run once


def test_mixed_suite_outcomes_and_messages(tmp_path: Path) -> None:
    proc = _pytest([str(FIXTURES / "mixed.yaml")], ROOT, tmp_path / "res")
    assert _counts(proc.stdout) == {"passed": 4, "failed": 5, "errors": 1}, proc.stdout
    out = proc.stdout
    # ERROR cases are pytest errors (at setup), FAIL cases are failures, each with its reasons
    assert "ERROR tests/fixtures/pytest_plugin/mixed.yaml::rubric errors[echo]" in out
    assert "FAILED tests/fixtures/pytest_plugin/mixed.yaml::capital fails[echo]" in out
    assert "FAILED tests/fixtures/pytest_plugin/mixed.yaml::csv fails[echo]" in out
    assert "FAILED tests/fixtures/pytest_plugin/mixed.yaml::jsonl fails[echo]" in out
    assert "PASSED tests/fixtures/pytest_plugin/mixed.yaml::tests[7][echo]" in out  # no description: its key path
    assert 'Output does not contain "paris" (ignoring case)' in out
    # graded details: claims with their verdicts and reasons
    assert re.search(r"\[FAIL\] faithfulness \(score 0(\.\d+)?\) \[grader builtin\]", out), out
    assert "- unsupported: 'It has two million people.'" in out
    # var expansion gives one item per combination, with readable ids
    assert "PASSED tests/fixtures/pytest_plugin/mixed.yaml::colours[echo-answer=red]" in out
    assert "FAILED tests/fixtures/pytest_plugin/mixed.yaml::colours[echo-answer=green]" in out
    assert "Traceback" not in out


def test_collect_only_lists_one_item_per_case(tmp_path: Path) -> None:
    proc = _pytest(["--collect-only", str(RAG_APP)], ROOT, tmp_path / "res")
    ids = [line for line in proc.stdout.splitlines() if "::" in line]
    assert ids == [f"examples/rag-app/evalrun.yaml::{d}[rag-app]" for d in
                   ("solar eclipses", "capital of Australia", "history of Python", "espresso", "photosynthesis")]
    assert not (tmp_path / "res").exists()  # collecting runs nothing


def test_k_selects_and_only_selected_cases_run(tmp_path: Path) -> None:
    proc = _pytest(["-k", "capital", str(FIXTURES / "mixed.yaml")], ROOT, tmp_path / "res")
    assert _counts(proc.stdout) == {"passed": 1, "failed": 1, "errors": 0}, proc.stdout
    assert sorted(str(r["description"]) for r in _results(tmp_path / "res")) == ["capital fails", "capital passes"]


def test_cases_of_a_file_run_concurrently(tmp_path: Path) -> None:
    log = tmp_path / "inflight.log"
    suite = tmp_path / "evalrun_concurrent.yaml"
    provider = (FIXTURES / "inflight.py").as_posix()
    suite.write_text(f"prompts: ['{{{{q}}}}']\nproviders: ['file://{provider}:call_api']\n"
                     "evaluateOptions: {maxConcurrency: 4}\n"
                     f"defaultTest: {{vars: {{log: '{log.as_posix()}'}}}}\n"
                     "tests:\n" + "".join(f"  - vars: {{q: q{i}}}\n" for i in range(4)))
    proc = _pytest([], tmp_path, tmp_path / "res")
    assert _counts(proc.stdout) == {"passed": 4, "failed": 0, "errors": 0}, proc.stdout
    assert max(int(x) for x in log.read_text().split()) == 4  # all four calls were in flight at once


def test_pattern_collects_matching_files_only(tmp_path: Path) -> None:
    suite = "prompts: ['{{q}}']\nproviders: [echo]\ntests:\n  - vars: {q: hi}\n    assert: [{type: equals, value: hi}]\n"
    (tmp_path / "evalrun_smoke.yaml").write_text(suite)
    (tmp_path / "other.yaml").write_text(suite)
    (tmp_path / "data.yml").write_text("not: [a suite\n")  # broken YAML that is not a suite: never read
    (tmp_path / "test_plain.py").write_text("def test_one():\n    assert True\n")
    proc = _pytest(["--collect-only", "-q"], tmp_path, tmp_path / "res")
    ids = sorted(line for line in proc.stdout.splitlines() if "::" in line)
    assert ids == ["evalrun_smoke.yaml::tests[0][echo]", "test_plain.py::test_one"], proc.stdout
    proc = _pytest(["--collect-only", "-q", "-o", "evalrun_files=other.*"], tmp_path, tmp_path / "res")
    ids = sorted(line for line in proc.stdout.splitlines() if "::" in line)
    assert ids == ["other.yaml::tests[0][echo]", "test_plain.py::test_one"], proc.stdout


def test_fixture_folder_of_yaml_files_is_not_collected(tmp_path: Path) -> None:
    """The project's own `pytest` walks tests/, full of YAML fixtures: none of them is collected."""
    proc = _pytest(["--collect-only", str(FIXTURES)], ROOT, tmp_path / "res")
    assert proc.returncode == 5 and "no tests collected" in proc.stdout, proc.stdout


def test_bad_suite_is_a_collection_error_with_file_and_line(tmp_path: Path) -> None:
    proc = _pytest([str(FIXTURES / "broken.yaml")], ROOT, tmp_path / "res")
    assert proc.returncode != 0
    assert ("evalrun: tests/fixtures/pytest_plugin/broken.yaml:6: tests[0].assert[0].type: "
            "unknown assertion type 'contians'") in proc.stdout, proc.stdout
    assert "hint: did you mean `contains`?" in proc.stdout
    assert "Traceback" not in proc.stdout


def test_grader_option_reaches_the_runner(tmp_path: Path) -> None:
    proc = _pytest(["--evalrun-grader", "nosuchprovider:model", str(FIXTURES / "mixed.yaml"), "-k", "unfaithful"],
                   ROOT, tmp_path / "res")
    assert _counts(proc.stdout)["errors"] == 1, proc.stdout
    assert "--grader" in proc.stdout and "nosuchprovider" in proc.stdout


def test_plugin_import_costs_nothing() -> None:
    code = ("import sys, evalrun.pytest_plugin; "
            "print(sorted(m for m in sys.modules if m.startswith(('evalrun.', 'litellm', 'yaml', 'jinja2'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['evalrun.pytest_plugin']"


CONTEXT_LIST = """\
prompts: ["{{answer}}"]
providers: [echo]
tests:
  - vars:
      answer: Paris is in France.
      context: ["Paris is in France.", "Berlin is in Germany."]
    assert:
      - type: context-faithfulness
"""


def test_a_context_list_that_multiplies_cases_is_said_before_they_run(tmp_path: Path) -> None:
    """issue 37: a list-valued vars.context silently multiplied the cases; the warning comes before the run, under
    pytest too (`evalrun eval` prints it on stderr before the progress bar)."""
    (tmp_path / "evalrun.yaml").write_text(CONTEXT_LIST)
    proc = _pytest([str(tmp_path / "evalrun.yaml"), "-v"], ROOT, tmp_path / "results")
    out = proc.stdout
    warning = out.find("vars.context is a list of 2 strings, so it expands into 2 cases")
    assert warning != -1, out
    first_case = min(i for i in (out.find("PASSED"), out.find("FAILED")) if i != -1)
    assert warning < first_case, out
    cli = subprocess.run([sys.executable, "-m", "evalrun", "eval", str(tmp_path / "evalrun.yaml"), "--no-history"],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert "expands into 2 cases" in cli.stderr and "of 2 cases" in cli.stdout
