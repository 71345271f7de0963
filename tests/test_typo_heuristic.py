"""A template variable is a typo only when it is a near-miss by edit distance of a defined name (issue 37): a name
that merely contains a defined one (`{{context.originalText}}` with `text` defined) renders empty with a warning, as
promptfoo runs it; every config of tests/compat loads without a false alarm, and no variable any of their files
uses without defining is a near-miss of a defined one."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest
import yaml

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


def _defined_names(node: object, out: set[str]) -> None:
    """Every key under a `vars:` mapping, at any depth of a YAML/JSON document."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "vars" and isinstance(value, dict):
                out.update(map(str, value))
            _defined_names(value, out)
    elif isinstance(node, list):
        for value in node:
            _defined_names(value, out)


def _names_of(folder: Path) -> tuple[set[str], set[str]]:
    """(used, defined): the `{{ name` of every text file in a config's folder; the vars its YAML/JSON files define,
    the keys of its list-of-rows files and its CSV headers. Read as text, so a config evalrun refuses for another
    reason (a TypeScript prompt, an unknown type) is swept too."""
    used: set[str] = set()
    defined: set[str] = set()
    for path in (p for p in folder.rglob("*") if p.is_file() and p.stat().st_size < 2_000_000):
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        used.update(re.findall(r"\{\{-?\s*([A-Za-z_]\w*)", text))
        if path.suffix == ".csv":
            defined.update(next(csv.reader(io.StringIO(text)), []))
        elif path.suffix in (".yaml", ".yml", ".json", ".jsonl"):
            try:
                docs = [yaml.safe_load(line) for line in text.splitlines() if line.strip()] \
                    if path.suffix == ".jsonl" else [*yaml.safe_load_all(text)]
            except yaml.YAMLError:
                continue
            docs += [[doc] for doc in docs if isinstance(doc, dict)] if path.suffix == ".jsonl" else []
            for doc in docs:
                _defined_names(doc, defined)
                rows = doc if isinstance(doc, list) else []
                defined.update(k for row in rows if isinstance(row, dict) and not {"vars", "assert"} & set(row)
                               for k in map(str, row))
    return used, defined


def test_no_near_miss_among_the_variables_of_every_compat_config() -> None:
    """Every variable a config's files use and none defines (`context` beside `text`, promptfoo's `env`, loop
    names) is no near-miss of a defined one, in every folder of tests/compat, loading or not (issue 37)."""
    folders = sorted({c.parent for c in CONFIGS if c.parent.name != "configs"} | {COMPAT / "configs"})
    swept = alarms = 0
    found = []
    for folder in folders:
        used, defined = _names_of(folder)
        for name in sorted(used - defined):
            swept += 1
            meant = near_miss(name, defined)
            if meant is not None:
                alarms += 1
                found.append(f"{folder.relative_to(COMPAT)}: {name} -> {meant}")
    assert swept > 10 and len(folders) > 60  # the sweep reaches the configs it is about
    assert not alarms, found
