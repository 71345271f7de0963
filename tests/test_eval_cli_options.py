"""`evalrun eval`'s promptfoo options that tests/compat/test_cli_options.py does not compare with promptfoo's
selection: results-file filters, --retry-errors, --env-file, --no-write, --watch, --description/--tag, .txt/.yaml
reports, the grouped --help and the usage errors."""

from __future__ import annotations

import json
import os
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from evalrun.cli import build_parser, main
from evalrun.commands import watch

SUITE = """
description: options
providers: [file://prov.py]
prompts: ["Say {{q}}"]
tests:
  - description: passes
    vars: {q: hello}
    assert: [{type: contains, value: hello}]
  - description: fails
    vars: {q: world}
    assert: [{type: contains, value: zzz}]
  - description: errors
    vars: {q: boom}
    assert: [{type: contains, value: boom}]
"""
PROVIDER = """
import os


def call_api(prompt, options, context):
    if "boom" in prompt and not os.path.exists("fixed"):
        raise RuntimeError("the provider failed")
    return {"output": prompt}
"""


@pytest.fixture
def suite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "evalrun.yaml"
    path.write_text(textwrap.dedent(SUITE))
    (tmp_path / "prov.py").write_text(textwrap.dedent(PROVIDER))
    return path


def _eval(*args: str) -> int:
    try:
        return main(["eval", *args, "--no-progress-bar", "--no-table"])
    except SystemExit as e:  # argparse's usage errors
        return int(e.code or 0)


def _report(path: str) -> dict[str, Any]:
    return json.loads(Path(path).read_text())


def _descriptions(path: str) -> list[str]:
    return sorted(r["description"] for r in _report(path)["results"])


def test_help_is_grouped() -> None:
    ev = build_parser()._subparsers._group_actions[0].choices["eval"]  # type: ignore[union-attr]
    titles = [g.title for g in ev._action_groups]
    assert {"select", "output", "run", "grading"} <= set(titles)
    by_group = {g.title: {a.dest for a in g._group_actions} for g in ev._action_groups}
    assert {"filter_range", "filter_sample", "filter_metadata", "filter_prompts", "filter_providers",
            "filter_failing_only", "filter_errors_only"} <= by_group["select"]
    assert {"output", "no_write", "table_cell_max_length", "verbose"} <= by_group["output"]
    assert {"retry_errors", "watch"} <= by_group["run"]


def test_failing_only_and_errors_only(suite: Path) -> None:
    assert _eval(str(suite), "-o", "all.json") == 100
    assert _eval(str(suite), "--filter-failing-only", "all.json", "-o", "f.json") == 100
    assert _descriptions("f.json") == ["fails"]
    assert _eval(str(suite), "--filter-errors-only", "all.json", "-o", "e.json") == 100
    assert _descriptions("e.json") == ["errors"]
    both = ["--filter-failing-only", "all.json", "--filter-errors-only", "all.json"]
    assert _eval(str(suite), *both, "-o", "b.json") == 100
    assert _descriptions("b.json") == ["errors", "fails"]
    assert _eval(str(suite), "--filter-failing", "all.json", "--filter-errors-only", "all.json") == 2


def test_retry_errors_reruns_only_the_errors_of_the_last_run(suite: Path) -> None:
    assert _eval(str(suite)) == 100
    (suite.parent / "fixed").write_text("")  # the provider no longer fails
    suite.write_text(suite.read_text().replace("value: zzz", "value: world"))
    assert _eval(str(suite), "--retry-errors", "-o", "r.json") == 100  # "fails" is kept as it was: a failure
    rep = _report("r.json")
    assert rep["summary"]["resumed"] == 2 and rep["summary"]["total"] == 3
    assert {r["description"]: r["status"] for r in rep["results"]} == \
        {"passes": "pass", "fails": "fail", "errors": "pass"}
    assert _eval(str(suite), "--retry-errors", "--resume") == 2


def test_env_file_repeatable_and_comma_list_later_wins(suite: Path, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLI_B", "")  # recorded, so what --env-file sets is undone after the test
    monkeypatch.delenv("CLI_B")
    monkeypatch.setenv("CLI_A", "from-process")
    (tmp_path / "one.env").write_text("CLI_A=one\nCLI_B=one\n")
    (tmp_path / "two.env").write_text("CLI_B=two\n")
    (tmp_path / "three.env").write_text("# comment\nCLI_B='three'\n")
    suite.write_text(suite.read_text().replace('"Say {{q}}"', '"Say {{q}} {{ env.CLI_A }} {{ env.CLI_B }}"')
                     .replace("file://prov.py", "echo"))
    assert _eval(str(suite), "--env-file", "one.env,two.env", "--filter-pattern", "passes", "-o", "a.json") == 0
    assert _report("a.json")["results"][0]["output"] == "Say hello one two"
    assert _eval(str(suite), "--env-file", "one.env", "--env-path", "three.env", "--filter-pattern", "passes",
                 "-o", "b.json") == 0
    assert _report("b.json")["results"][0]["output"] == "Say hello one three"
    assert _eval(str(suite), "--env-file", "missing.env") == 2


def test_no_write_leaves_no_trace(suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _eval(str(suite), "--no-write") == 100
    assert not (tmp_path / ".evalrun").exists()
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("Results file: "))
    results = Path(line.removeprefix("Results file: ").split(" (run")[0])
    assert results.is_file() and len(results.read_text().splitlines()) == 3
    assert _eval(str(suite), "--retry-errors", "--no-write") == 2


def test_description_and_tags_in_the_reports(suite: Path) -> None:
    suite.write_text(suite.read_text() + "tags: {team: qa, env: dev}\n")
    assert _eval(str(suite), "--description", "nightly", "--tag", "env=prod", "--tag", "build=7=x",
                 "-o", "out.json") == 100
    meta = _report("out.json")["meta"]
    assert meta["description"] == "nightly" and meta["tags"] == {"team": "qa", "env": "prod", "build": "7=x"}
    assert _eval(str(suite), "--tag", "novalue") == 2


@pytest.mark.parametrize("ext", [".txt", ".yaml", ".yml"])
def test_txt_and_yaml_reports_are_the_json_report_as_yaml(suite: Path, ext: str) -> None:
    """promptfoo writes .txt, .yaml and .yml alike: YAML of its JSON output."""
    assert _eval(str(suite), "-o", "out.json", "-o", f"out{ext}") == 100
    as_yaml, as_json = yaml.safe_load(Path(f"out{ext}").read_text()), _report("out.json")
    assert as_yaml["summary"] == as_json["summary"] and as_yaml["meta"] == as_json["meta"]
    assert as_yaml["results"] == as_json["results"]


def test_prompt_prefix_under_the_configs_own(suite: Path) -> None:
    """defaultTest's and a test's options.prefix win over --prompt-prefix (promptfoo's order)."""
    suite.write_text(suite.read_text().replace("  - description: fails\n",
                                               "  - description: fails\n    options: {prefix: 'OWN '}\n"))
    assert _eval(str(suite), "--prompt-prefix", "CLI ", "--prompt-suffix", "!", "-o", "p.json") == 100
    outputs = {r["description"]: r["output"] for r in _report("p.json")["results"]}
    assert {k: v for k, v in outputs.items() if k != "errors"} == {"passes": "CLI Say hello!",
                                                                   "fails": "OWN Say world!"}


def test_a_suite_from_the_command_line_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.txt").write_text("Q: {{q}}")
    (tmp_path / "t.csv").write_text("q,__expected\ncats,contains:cats\ndogs,contains:cats\n")
    assert _eval("-p", "p.txt", "-r", "echo", "-t", "t.csv", "-o", "out.json") == 100
    assert [(r["output"], r["pass"]) for r in _report("out.json")["results"]] == [("Q: cats", True),
                                                                                    ("Q: dogs", False)]
    (tmp_path / "a.yaml").write_text("- type: contains\n  value: cat\n")
    assert _eval("-a", "a.yaml") == 2  # needs --model-outputs


def test_usage_errors(suite: Path) -> None:
    for bad in (["--filter-range", "3"], ["--filter-range", "5:2"], ["--filter-metadata", "team"],
                ["--filter-prompts", "nomatch"], ["--filter-providers", "("], ["--filter-sample-seed", "1"],
                ["--filter-sample", "2", "--filter-sample-seed", "abc"]):
        assert _eval(str(suite), *bad) == 2, bad


def test_filter_sample_without_a_seed_picks_n_tests(suite: Path) -> None:
    assert _eval(str(suite), "--filter-sample", "2", "-o", "s.json") in (0, 100)
    assert len(_report("s.json")["results"]) == 2


def test_watch_loop_runs_again_on_a_change(tmp_path: Path) -> None:
    watched = tmp_path / "c.yaml"
    watched.write_text("a")
    runs: list[int] = []

    def run_once() -> tuple[int, set[Path]]:
        runs.append(1)
        return len(runs), {watched}

    def sleep(_: float) -> None:  # the user edits the file while the watch waits
        stat = watched.stat()
        os.utime(watched, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))

    assert watch.loop(run_once, iterations=3, sleep=sleep) == 3 and len(runs) == 3


def test_watch_reruns_the_eval_when_a_prompt_file_changes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "prompt.txt").write_text("first {{q}}")
    cfg = tmp_path / "evalrun.yaml"
    cfg.write_text("providers: [echo]\nprompts: [file://prompt.txt]\ntests: [{vars: {q: x}}]\n")
    done = threading.Event()

    def edit() -> None:
        time.sleep(1.0)
        (tmp_path / "prompt.txt").write_text("second {{q}}")
        stat = (tmp_path / "prompt.txt").stat()
        os.utime(tmp_path / "prompt.txt", ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
        done.set()

    threading.Thread(target=edit, daemon=True).start()
    assert main(["eval", str(cfg), "--watch", "--watch-iterations", "2", "--no-progress-bar",
                 "-o", "out.json"]) == 0
    assert done.is_set()
    out = capsys.readouterr()
    assert "File change detected" in out.err and "prompt.txt" in out.err
    assert "second x" in out.out and "first x" in out.out
    assert _report("out.json")["results"][0]["output"] == "second x"
