"""`--format github`: ::error annotations at each failing test's own line (inline YAML, CSV, JSONL) and the
Markdown job summary; automatic under GITHUB_ACTIONS=true unless `--format console`."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalrun.cli import main
from evalrun.report import workspace_path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures" / "pytest_plugin"
REL = "tests/fixtures/pytest_plugin"


def _line_of(path: Path, needle: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if needle in line)


def _run(args: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str]]:
    code = main(["eval", str(FIXTURES / "mixed.yaml"), "--no-table", "--no-progress-bar",
                 "--results-file", str(tmp_path / "r.jsonl"), *args])
    return code, [line for line in capsys.readouterr().out.splitlines() if line.startswith("::")]


@pytest.fixture
def actions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    monkeypatch.setenv("GITHUB_WORKSPACE", str(ROOT))
    monkeypatch.chdir(FIXTURES)  # paths are made relative to the workspace, not the current folder
    return summary


def test_annotations_point_at_inline_csv_and_jsonl_lines(actions: Path, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    code, lines = _run([], tmp_path, capsys)
    assert code == 100
    yaml_line = _line_of(FIXTURES / "mixed.yaml", "description: capital fails")
    csv_line = _line_of(FIXTURES / "more_tests.csv", "csv fails")
    jsonl_line = _line_of(FIXTURES / "tests.jsonl", "jsonl fails")
    assert (yaml_line, csv_line, jsonl_line) == (13, 3, 2)
    by_title = {line.split("title=")[1].split("::")[0]: line for line in lines}
    assert by_title["evalrun%3A capital fails (1 failed)"].startswith(
        f"::error file={REL}/mixed.yaml,line={yaml_line},title=")
    assert by_title["evalrun%3A csv fails (1 failed)"].startswith(f"::error file={REL}/more_tests.csv,line={csv_line},")
    assert by_title["evalrun%3A jsonl fails (1 failed)"].startswith(f"::error file={REL}/tests.jsonl,line={jsonl_line},")
    rubric = by_title["evalrun%3A rubric errors (1 error)"]
    assert f"line={_line_of(FIXTURES / 'mixed.yaml', 'description: rubric errors')}," in rubric
    assert "::[echo / {{answer}}] answer=Anything at all.: ERROR: llm-rubric: grader error" in rubric
    assert 'icontains: Output does not contain "paris" (ignoring case)' in by_title["evalrun%3A capital fails (1 failed)"]
    # one annotation per failing test: 6 tests fail or error (the colours test fails for one of its two values)
    assert len(lines) == 6 and all(line.startswith("::error file=") for line in lines)
    assert all("\n" not in line for line in lines)


def test_job_summary_has_pass_rate_per_provider_and_prompt(actions: Path, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    _run([], tmp_path, capsys)
    text = actions.read_text()
    assert text.startswith("## evalrun: mixed outcomes for the pytest plugin\n")
    assert "**4 passed, 5 failed, 1 error of 10 cases (40.00% pass rate) in " in text
    assert "| echo | {{answer}} | 4 | 5 | 1 | 40.00% |" in text
    assert "- **csv fails** [echo / {{answer}}] answer=The grass is green.: contains: Output does not contain" in text


def test_console_format_turns_it_off_in_actions(actions: Path, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    code, lines = _run(["--format", "console"], tmp_path, capsys)
    assert code == 100 and lines == [] and not actions.exists()


def test_github_format_outside_actions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    monkeypatch.delenv("GITHUB_WORKSPACE", raising=False)
    monkeypatch.chdir(ROOT)
    assert len(_run([], tmp_path, capsys)[1]) == 0  # not in Actions: console only
    _code, lines = _run(["--format", "github"], tmp_path, capsys)
    assert len(lines) == 6 and lines[0].startswith(f"::error file={REL}/mixed.yaml,line=13,")


def test_special_characters_are_escaped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    suite = tmp_path / "s,1.yaml"
    suite.write_text("prompts: ['{{q}}']\nproviders: [echo]\ntests:\n  - description: 'a: b, 100%'\n"
                     "    vars: {q: \"two\\nlines\"}\n    assert: [{type: equals, value: x}]\n")
    monkeypatch.delenv("GITHUB_WORKSPACE", raising=False)
    monkeypatch.chdir(tmp_path)
    main(["eval", str(suite.name), "--no-table", "--format", "github", "--results-file", "r.jsonl"])
    [line] = [x for x in capsys.readouterr().out.splitlines() if x.startswith("::")]
    assert line.startswith("::error file=s%2C1.yaml,line=4,title=evalrun%3A a%3A b%2C 100%25 (1 failed)::")
    assert "two lines" in line or "two%0Alines" in line


def test_workspace_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_WORKSPACE", str(tmp_path))
    (tmp_path / "evals").mkdir()
    monkeypatch.chdir(tmp_path / "evals")
    assert workspace_path("suite.yaml") == "evals/suite.yaml"
    assert workspace_path(str(tmp_path / "evals" / "t.csv")) == "evals/t.csv"
    assert workspace_path("/elsewhere/x.yaml") == "/elsewhere/x.yaml"
