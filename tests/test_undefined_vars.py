"""Undefined template variables, promptfoo's way: a variable close to a defined one (a typo) is a config error at
its line; any other renders as empty text with a warning at FILE:LINE; --strict makes it an error. The same rule
in `validate`, `eval`, the API and the pytest plugin."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from evalrun.api import evaluate
from evalrun.cli import main
from evalrun.config import load
from evalrun.errors import ConfigError, ConfigWarning

SUITE = """\
prompts:
  - 'Context: {{context}}. Question: {{question}}'
providers: [echo]
tests:
  - vars: {question: Why?}
    assert:
      - type: equals
        value: 'Context: {{ extra.detail }}. Question: Why?'
"""


def _write(tmp_path: Path, text: str = SUITE, name: str = "promptfooconfig.yaml") -> Path:
    cfg = tmp_path / name
    cfg.write_text(text)
    return cfg


def test_an_undefined_variable_warns_at_its_line_and_renders_empty(tmp_path: Path) -> None:
    suite = load([str(_write(tmp_path))])
    assert suite.undefined_renders_empty
    assert len(suite.warnings) == 2
    prompt_w, assert_w = suite.warnings
    assert prompt_w.startswith(f"{tmp_path / 'promptfooconfig.yaml'}:2: undefined template variable 'context' in "
                               "prompt") and "renders as empty text" in prompt_w and "--strict" in prompt_w
    assert ":7: tests[0].assert[0]: undefined template variable 'extra'" in assert_w
    rows = _eval(tmp_path)
    assert rows[0]["output"] == "Context: . Question: Why?" and rows[0]["pass"]


def _eval(tmp_path: Path, *extra: str) -> list[dict[str, object]]:
    out = tmp_path / "out.json"
    assert main(["eval", str(tmp_path / "promptfooconfig.yaml"), "-o", str(out), "--no-cache", *extra]) == 0
    return list(json.loads(out.read_text())["results"])


def test_a_likely_typo_stays_an_error_at_its_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = _write(tmp_path, SUITE.replace("{{question}}", "{{questoin}}"))
    assert main(["validate", str(cfg)]) == 2
    err = capsys.readouterr().err
    assert "promptfooconfig.yaml:2: undefined template variable 'questoin'" in err
    assert "did you mean `question`?" in err
    with pytest.raises(ConfigError):
        load([str(cfg)])


def test_validate_and_eval_print_the_warning(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = _write(tmp_path)
    assert main(["validate", str(cfg)]) == 0
    out = capsys.readouterr().out
    assert "config OK" in out and "warning: " in out and "undefined template variable 'context'" in out
    _eval(tmp_path)
    assert "undefined template variable 'context'" in capsys.readouterr().err


def test_strict_makes_it_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = _write(tmp_path)
    for command in (["validate", str(cfg), "--strict"], ["eval", str(cfg), "--strict", "--no-cache"]):
        assert main(command) == 2
        err = capsys.readouterr().err
        assert "promptfooconfig.yaml:2: undefined template variable 'context'" in err and "--strict" in err
    with pytest.raises(ConfigError):
        load([str(cfg)], strict=True)


def test_the_api_warns_and_strict_raises(tmp_path: Path) -> None:
    cfg = _write(tmp_path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        outcome = evaluate(str(cfg), use_cache=False, results_file=tmp_path / "r.jsonl")
    assert outcome.summary["passed"] == 1
    texts = [str(w.message) for w in caught if issubclass(w.category, ConfigWarning)]
    assert len(texts) == 2 and "'context'" in texts[0]
    with pytest.raises(ConfigError, match="'context'"):
        evaluate(str(cfg), use_cache=False, strict=True, results_file=tmp_path / "s.jsonl")


def test_the_pytest_plugin_warns_and_strict_errors(tmp_path: Path) -> None:
    cfg = _write(tmp_path, name="evalrun_suite.yaml")
    cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-o", f"evalrun_results_dir={tmp_path}/r",
           str(cfg)]
    done = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout
    assert "ConfigWarning" in done.stdout and "undefined template variable 'context'" in done.stdout
    strict = subprocess.run([*cmd, "--evalrun-strict"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert strict.returncode != 0 and "evalrun_suite.yaml:2: undefined template variable 'context'" in strict.stdout


def test_a_suite_built_in_code_still_errors_at_run_time() -> None:
    """Rendering is lenient only for a loaded (and so checked) config: templating's default stays strict."""
    import jinja2

    from evalrun import templating

    with pytest.raises(jinja2.UndefinedError):
        templating.render_prompt("hi {{ nope }}", {})
    assert templating.render_prompt("hi {{ nope }}{{ a.b }}", {}, lenient=True) == "hi "
    with pytest.raises(jinja2.UndefinedError, match="EVALRUN_UNSET_X"):
        templating.render("{{ env.EVALRUN_UNSET_X }}", {}, lenient=True)


def test_filters_treat_an_undefined_value_as_nunjucks_does(tmp_path: Path) -> None:
    """Most filters render an undefined value as empty text; those Nunjucks throws on (join, first, ...) make the
    case an ERROR, as promptfoo's case errors (a real config: `{{ profile.interests | join(', ') }}`)."""
    _write(tmp_path, "prompts: ['{{ who | upper }}:{{ profile.interests | join(\", \") }}', '{{ who | upper }}.']\n"
                     "providers: [echo]\ntests:\n  - vars: {}\n  - vars: {who: ann, profile: {interests: [a, b]}}\n")
    out = tmp_path / "out.json"
    assert main(["eval", str(tmp_path / "promptfooconfig.yaml"), "-o", str(out), "--no-cache"]) == 100
    rows = sorted(json.loads(out.read_text())["results"], key=lambda r: (r["test_index"], r["prompt_label"]))
    assert [(r["status"], r["output"]) for r in rows] == [
        ("pass", "."), ("error", None), ("pass", "ANN."), ("pass", "ANN:a, b")]
    assert "join filter got an undefined value" in rows[1]["error"]
