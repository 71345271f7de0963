"""The config JSON Schema: committed file in sync with the registry, valid 2020-12, and the fast runtime check
agrees with jsonschema."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from evalrun.assertions import registry
from evalrun.config import schema
from evalrun.config.readers.yamldoc import parse_yaml
from evalrun.config.schema import build_schema
from evalrun.errors import ConfigError

ROOT = Path(__file__).resolve().parent.parent
SCHEMA_FILE = ROOT / "schemas" / "evalrun.schema.json"


def _gen_module() -> Any:
    spec = importlib.util.spec_from_file_location("gen_schema", ROOT / "scripts" / "gen_schema.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_committed_schema_is_generated_from_the_registry() -> None:
    assert SCHEMA_FILE.read_text(encoding="utf-8") == _gen_module().render(), \
        "schema out of date: run `python scripts/gen_schema.py`"


def test_schema_is_valid_2020_12_with_type_enum() -> None:
    doc = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(doc)
    assert doc["$schema"].endswith("2020-12/schema")
    enum = doc["$defs"]["assertion"]["properties"]["type"]["enum"]
    builtin = _gen_module().builtin_types()
    assert len(builtin) >= 30 and set(builtin) <= set(registry.names())
    for name in builtin:
        assert name in enum and f"not-{name}" in enum
    assert doc["$defs"]["assertion"]["additionalProperties"] is False
    assert "grader" in doc["properties"] and "extends" in doc["properties"]
    assert all("description" in d or "anyOf" in d for d in doc["$defs"].values())


def test_editor_schema_rejects_unknown_type_runtime_schema_leaves_it_to_the_registry() -> None:
    cfg = {"providers": ["echo"], "tests": [{"assert": [{"type": "contians", "value": "x"}]}]}
    editor = jsonschema.Draft202012Validator(json.loads(SCHEMA_FILE.read_text(encoding="utf-8")))
    assert not editor.is_valid(cfg)
    runtime = build_schema(None)
    assert schema.conforms(cfg, runtime, runtime["$defs"])


DOCS = [
    "prompts: ['a']\nproviders: [echo]\n",
    "prompts: {file://a.txt: lab}\nproviders: echo\ntests: file://t.csv\n",
    "providers: [{id: echo, label: x, config: {a: 1}, prompts: [p]}, {openai:gpt-4o: {config: {}}}]\n",
    "providers: [{openai:gpt-4o: 3}]\n",
    "providers: [{id: echo, lable: x}]\n",
    "providers: [{}]\n",
    "tests: [{vars: {a: [1, 2]}, assert: [{type: x, value: 1, threshold: 0.5, weight: 0}]}]\n",
    "tests: [{assert: [{type: x, weight: -1}]}]\n",
    "tests: [{threshold: 1.2}]\n",
    "tests: [{threshold: true}]\n",
    "tests: [{assert: [{value: 1}]}]\n",
    "tests: [file://a.csv, {path: file://g.py, config: {}}, {vars: file://v.yaml}]\n",
    "tests: [{path: 3}]\n",
    "evaluateOptions: {maxConcurrency: 0}\n",
    "evaluateOptions: {maxConcurrency: 2.0, repeat: 2}\n",
    "evaluateOptions: {repeat: 1.5}\n",
    "scenarios: [{config: [{vars: {a: 1}}], tests: [{vars: {b: 2}}]}]\n",
    "scenarios: [{tests: []}]\n",
    "env: {A: 1, B: x, C: true, D: [1]}\n",
    "tets: []\n",
    "outputPath: [a.json, b.csv]\n",
    "grader: {id: openai:gpt-4o}\nextends: [a.yaml]\n",
    "prompts: [[{role: user, content: hi}], {raw: x, label: y}, {label: only}]\n",
    "prompts: [[{content: hi}]]\n",
    "defaultTest: {assert: [{type: contains, value: a, assert: [{type: b}]}], options: {provider: x}}\n",
    "defaultTest: {options: {prefx: a}}\n",
]


@pytest.mark.parametrize("text", DOCS)
def test_fast_check_agrees_with_jsonschema(text: str) -> None:
    doc = parse_yaml(text, "c.yaml")
    runtime = build_schema(None)
    expected = jsonschema.Draft202012Validator(runtime).is_valid(doc)
    assert schema.conforms(doc, runtime, runtime["$defs"]) == expected


def test_broken_corpus_and_fixtures_agree_with_jsonschema() -> None:
    runtime = build_schema(None)
    validator = jsonschema.Draft202012Validator(runtime)
    paths = [*(ROOT / "tests" / "broken").glob("*.yaml"), *(ROOT / "tests" / "fixtures" / "config").rglob("*.yaml")]
    checked = 0
    for path in paths:
        try:
            doc = parse_yaml(path.read_text(encoding="utf-8"), path.name)
        except ConfigError:
            continue
        if isinstance(doc, dict):
            assert schema.conforms(doc, runtime, runtime["$defs"]) == validator.is_valid(doc), path.name
            checked += 1
    assert checked >= 25


@pytest.mark.parametrize(("text", "line", "key", "fragment", "hint"), [
    ("prompts: ['a']\ntets: []\n", 2, "tets", "unknown key 'tets'", "did you mean `tests`?"),
    ("tests:\n  - vars: {}\n    assert:\n      - type: x\n        tresh: 1\n", 5, "tests[0].assert[0].tresh",
     "unknown key", "did you mean `threshold`?"),
    ("evaluateOptions:\n  repeat: 0\n", 2, "evaluateOptions.repeat", "out of range: must be between 1 and 10000", None),
    ("tests:\n  - assert:\n      - value: 1\n", 3, "tests[0].assert[0]", "missing required key 'type'", None),
    ("prompts: 3\n", 1, "prompts", "expected a string or a list or a mapping, got a number", None),
])
def test_errors_are_mapped_to_lines_and_explained(text: str, line: int, key: str, fragment: str,
                                                  hint: str | None) -> None:
    with pytest.raises(ConfigError) as e:
        schema.validate(parse_yaml(text, "c.yaml"), file="c.yaml")
    assert (e.value.file, e.value.line, e.value.key) == ("c.yaml", line, key)
    assert fragment in e.value.message
    if hint:
        assert e.value.hint == hint


def test_gen_schema_check_mode(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mod = _gen_module()
    assert mod.main(["--check"]) == 0
    monkeypatch.setattr(mod, "SCHEMA_PATH", tmp_path / "s.json")
    assert mod.main(["--check"]) == 1
    assert mod.main([]) == 0 and mod.main(["--check"]) == 0


def test_editor_schema_accepts_every_fixture_config() -> None:
    editor = jsonschema.Draft202012Validator(json.loads(SCHEMA_FILE.read_text(encoding="utf-8")))
    configs = sorted((ROOT / "tests" / "fixtures" / "config").glob("*/promptfooconfig.yaml"))
    assert len(configs) >= 6
    for path in configs:
        doc = parse_yaml(path.read_text(encoding="utf-8"), path.name)
        assert editor.is_valid(doc), (path, [e.message for e in editor.iter_errors(doc)][:3])
