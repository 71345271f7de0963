"""The line-tracking YAML/JSON/JSONL reader."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalrun.config.readers import load_config_file, parse_data
from evalrun.config.readers.jsondoc import parse_jsonl
from evalrun.config.readers.located import LDict, LList, loc_of
from evalrun.config.readers.yamldoc import parse_yaml
from evalrun.errors import ConfigError


def test_lines_of_keys_and_items() -> None:
    doc = parse_yaml("a: 1\nlist:\n  - x\n  - k: v\n    j: w\n", "f.yaml")
    assert isinstance(doc, LDict) and isinstance(doc["list"], LList)
    assert doc.loc("a").line == 1 and doc.loc("list").line == 2
    assert loc_of(doc["list"], 0).line == 3 and loc_of(doc["list"], 1).line == 4
    assert doc["list"][1].loc("j").line == 5 and doc["list"][1].file == "f.yaml"
    assert doc == {"a": 1, "list": ["x", {"k": "v", "j": "w"}]}


def test_scalar_types_and_non_string_keys() -> None:
    doc = parse_yaml("i: 3\nf: 0.5\nb: true\nn: null\ns: '3'\nd: 2024-01-02\n1: one\n", "f")
    assert doc == {"i": 3, "f": 0.5, "b": True, "n": None, "s": "3", "d": "2024-01-02", "1": "one"}


def test_duplicate_key_is_an_error_with_both_lines() -> None:
    with pytest.raises(ConfigError) as e:
        parse_yaml("tests:\n  - vars: {}\nprompts: []\ntests: []\n", "c.yaml")
    assert (e.value.file, e.value.line) == ("c.yaml", 4)
    assert "duplicate key 'tests'" in e.value.message and "line 1" in e.value.message


def test_merge_keys_do_not_count_as_duplicates() -> None:
    doc = parse_yaml("base: &b {x: 1, y: 2}\nt:\n  <<: *b\n  y: 3\n", "f")
    assert doc["t"] == {"x": 1, "y": 3}
    assert doc["t"].loc("y").line == 4


def test_tab_indentation_gets_a_specific_hint() -> None:
    with pytest.raises(ConfigError) as e:
        parse_yaml("tests:\n\t- vars: {}\n", "t.yaml")
    assert e.value.line == 2 and "tab" in e.value.message and "spaces" in (e.value.hint or "")


def test_invalid_yaml_reports_line() -> None:
    with pytest.raises(ConfigError) as e:
        parse_yaml("a: [1, 2\nb: 3\n", "bad.yaml")
    assert e.value.file == "bad.yaml" and e.value.line >= 2 and e.value.message.startswith("invalid YAML")


def test_json_keeps_lines_and_reports_syntax_errors() -> None:
    doc = parse_data('{\n  "a": 1,\n  "b": [1, 2]\n}\n', "c.json")
    assert doc.loc("b").line == 3
    with pytest.raises(ConfigError) as e:
        parse_data('{\n  "a": 1,\n}\n', "c.json")
    assert e.value.line == 3 and "invalid JSON" in e.value.message


def test_jsonl_items_know_their_line() -> None:
    rows = parse_jsonl('{"vars": {"a": 1}}\n\n{"vars": {"a": 2}}\n', "t.jsonl")
    assert [r["vars"]["a"] for r in rows] == [1, 2]
    assert loc_of(rows, 1).line == 3 and rows[1].loc("vars").line == 3
    with pytest.raises(ConfigError) as e:
        parse_jsonl('{"a": 1}\n{"a": \n', "t.jsonl")
    assert e.value.line == 2


def test_empty_and_non_mapping_configs(tmp_path: Path) -> None:
    (tmp_path / "empty.yaml").write_text("# nothing\n")
    (tmp_path / "list.yaml").write_text("- a\n- b\n")
    with pytest.raises(ConfigError, match="empty"):
        load_config_file(tmp_path / "empty.yaml", "empty.yaml")
    with pytest.raises(ConfigError, match="must be a mapping") as e:
        load_config_file(tmp_path / "list.yaml", "list.yaml")
    assert e.value.line == 1


def test_aliases_share_values() -> None:
    doc = parse_yaml("a: &x [1, 2]\nb: *x\n", "f")
    assert doc["a"] is doc["b"]


def test_yaml_12_core_scalars_like_promptfoo() -> None:
    doc = parse_yaml("a: [yes, no, on, off, True, FALSE, ~, 012, 0o17, 0x1f, 1:30, 1.5, .5, 1e3, -.inf]\n", "f")
    assert doc["a"][:7] == ["yes", "no", "on", "off", True, False, None]
    assert doc["a"][7:11] == [12, 15, 31, "1:30"]
    assert doc["a"][11:] == [1.5, 0.5, 1000.0, float("-inf")]
    with pytest.raises(ConfigError, match="not a valid int") as e:
        parse_yaml("a: 1\nb: !!int nope\n", "f")
    assert e.value.line == 2


def test_json_duplicate_keys_and_tabs() -> None:
    with pytest.raises(ConfigError, match="duplicate key 'a'") as e:
        parse_data('{\n  "a": 1,\n  "a": 2\n}\n', "c.json")
    assert e.value.line == 3
    assert parse_data('{\n\t"a": [1,\t2]\n}\n', "c.json") == {"a": [1, 2]}  # tabs are fine in JSON
