"""A template variable is a typo only when it is a near-miss by edit distance of a defined name (issue 37): a name
that merely contains a defined one (`{{context.originalText}}` with `text` defined) renders empty with a warning, as
promptfoo runs it; every config of tests/compat loads without a false alarm."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalrun.cli import main
from evalrun.config import load
from evalrun.config.checks import near_miss
from evalrun.errors import ConfigError

COMPAT = Path(__file__).parent / "compat"
CONFIGS = sorted([*COMPAT.glob("promptfoo_examples/*/promptfooconfig.yaml"),
                  *COMPAT.glob("real_configs/*/promptfooconfig.yaml"), *COMPAT.glob("configs/*.yaml")])


@pytest.mark.parametrize(("name", "defined", "meant"), [
    ("questoin", {"question", "context"}, "question"),  # two letters swapped
    ("compres_prompt", {"compress_prompt"}, "compress_prompt"),  # one dropped
    ("contxt", {"context", "text"}, "context"),
    ("qustion", {"question"}, "question"),
    ("nme", {"name"}, "name"),
    ("context", {"text"}, None),  # the held-out config: a defined name inside it is no typo
    ("originalText", {"text"}, None),
    ("user_input", {"input"}, None),
    ("topic", {"topics_list"}, None),
    ("id", {"ids", "idx"}, "ids"),  # nearest first, alphabetical on a tie
    ("query", {"question"}, None),
])
def test_near_miss(name: str, defined: set[str], meant: str | None) -> None:
    assert near_miss(name, defined) == meant


def test_a_defined_name_inside_a_variable_is_not_a_typo(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = tmp_path / "suite.yaml"
    cfg.write_text("prompts: ['Rewrite {{text}}']\nproviders: [echo]\ntests:\n  - vars: {text: hello}\n"
                   "    assert:\n      - type: equals\n        value: 'Rewrite hello{{context.originalText}}'\n",
                   encoding="utf-8")
    out = tmp_path / "out.json"
    assert main(["eval", str(cfg), "-o", str(out), "--no-history", "--no-progress-bar"]) == 0
    err = capsys.readouterr().err
    assert "undefined template variable 'context'" in err and "renders as empty text" in err
    assert json.loads(out.read_text())["results"][0]["pass"] is True
    assert main(["eval", str(cfg), "--strict", "--no-history", "--no-progress-bar"]) == 2  # --strict: an error


@pytest.mark.parametrize("config", CONFIGS, ids=lambda p: str(p.relative_to(COMPAT)))
def test_no_false_alarm_on_compat_configs(config: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(config.parent)
    for var in ("AZURE_DEPLOYMENT", "AZURE_API_HOST", "OPENAI_BASE_URL", "OPENROUTER_API_KEY"):
        monkeypatch.setenv(var, "x")
    try:
        load([config.name])
    except ConfigError as e:  # other strictness is another test's business; a typo alarm is this one's
        assert "undefined template variable" not in e.message or "did you mean" not in str(e.hint), str(e)
