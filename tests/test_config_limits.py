"""Hostile config text: alias bombs, deep nesting, binary junk, bad encodings, NUL bytes, JSON escapes.

Every case must end in one ConfigError naming the file and line (exit 2 through the CLI), fast and without
a traceback, a RecursionError, a MemoryError or a crash of the libyaml C parser.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from evalrun.config import load
from evalrun.config.readers import parse_data
from evalrun.config.readers.jsondoc import parse_jsonl
from evalrun.config.readers.located import MAX_DEPTH
from evalrun.config.readers.yamldoc import parse_yaml
from evalrun.errors import ConfigError

HEAD = 'prompts: ["Say {{x}}"]\nproviders: [echo]\n'


def _bomb(indent: str, levels: int = 8) -> str:
    """Nested aliases, each level nine copies of the one before: 9**levels values once expanded."""
    lines = [f"{indent}l0: &l0 [x, x, x, x, x, x, x, x, x]"]
    for i in range(1, levels):
        lines.append(f"{indent}l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 9) + "]")
    return "\n".join(lines) + "\n"


BOMBS = {
    "unknown test key": HEAD + "tests:\n  - vars: {x: hi}\n    junk:\n" + _bomb("      "),
    "vars": HEAD + "tests:\n  - vars:\n" + _bomb("      "),
    "provider entry": 'prompts: ["x"]\nproviders:\n  - id: echo\n    junk:\n' + _bomb("      ") + "tests: []\n",
    "assertion": HEAD + "tests:\n  - vars: {x: hi}\n    assert:\n      - type: contains\n        value: hi\n"
                 "        junk:\n" + _bomb("          "),
}


@pytest.mark.parametrize("where", sorted(BOMBS))
def test_alias_bomb_is_a_config_error_at_the_alias_line(where: str, tmp_path: Path) -> None:
    text = BOMBS[where]
    (tmp_path / "c.yaml").write_text(text)
    start = time.monotonic()
    with pytest.raises(ConfigError) as e:
        load([str(tmp_path / "c.yaml")])
    assert time.monotonic() - start < 5
    assert "aliases" in e.value.message and "1,000,000" in e.value.message
    lines = text.splitlines()
    assert e.value.file and e.value.file.endswith("c.yaml")
    assert "*l" in lines[e.value.line - 1], lines[e.value.line - 1]


def test_reasonable_alias_reuse_still_loads() -> None:
    text = "base: &b {a: 1, b: [1, 2, 3]}\nitems:\n" + "".join("  - *b\n" for _ in range(1000))
    doc = parse_yaml(text, "f.yaml")
    assert len(doc["items"]) == 1000 and doc["items"][999] == {"a": 1, "b": [1, 2, 3]}


def test_alias_inside_its_own_anchor_is_an_error() -> None:
    with pytest.raises(ConfigError) as e:
        parse_yaml("a: &x\n  - 1\n  - *x\n", "f.yaml")
    assert e.value.line in (1, 2) and "inside the value its anchor" in e.value.message


@pytest.mark.parametrize("text,line", [
    (HEAD + "tests:\n  - vars: {v: " + "[" * 600 + "]" * 600 + "}\n", 4),
    (HEAD + "tests:\n  - vars: " + "{a: " * 100_000 + "1" + "}" * 100_000 + "\n", 4),
    (HEAD + "tests:\n  - vars:\n      v:\n        " + "- " * 300 + "x\n", 6),
])
def test_deep_nesting_is_a_config_error_with_its_line(text: str, line: int) -> None:
    with pytest.raises(ConfigError) as e:
        parse_yaml(text, "deep.yaml")
    assert (e.value.file, e.value.line) == ("deep.yaml", line)
    assert f"more than {MAX_DEPTH} levels" in e.value.message


def test_deep_json_and_jsonl_are_config_errors() -> None:
    deep = "[" * 5000 + "]" * 5000
    with pytest.raises(ConfigError) as e:
        parse_data('{"a":\n' + deep + "}", "c.json")
    assert e.value.line == 2
    with pytest.raises(ConfigError) as e:
        parse_jsonl('{"a": 1}\n{"v": ' + deep + "}\n", "t.jsonl")
    assert e.value.line == 2 and "nested" in e.value.message


def test_brackets_in_text_do_not_trip_the_depth_limit() -> None:
    text = "prompt: |\n" + "".join("  [[[[[[ not nesting\n" for _ in range(50)) + "x: [1, [2]]\n"
    assert parse_yaml(text, "f.yaml")["x"] == [1, [2]]


def test_the_segfaulting_flow_mapping_exits_2_through_the_cli(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(HEAD + "tests:\n  - vars: " + "{a: " * 100_000 + "1" + "}" * 100_000 + "\n")
    r = subprocess.run([sys.executable, "-m", "evalrun", "validate", str(path)], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 2, r.stderr
    assert "c.yaml:4:" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.parametrize("raw,line,words", [
    (b'prompts: [x]\nproviders: [echo]\ntests:\n  - vars: {a: "\xff\xfe"}\n', 4, "not UTF-8"),
    (b"\xff\xfep\x00r\x00", 1, "not UTF-8"),
    (b'prompts: [x]\nproviders: [echo]\ntests:\n  - vars: {a: "x\x00"}\n', 4, "U+0000"),
    (b"prompts: [x]\n\x07providers: [echo]\n", 2, "U+0007"),
])
def test_binary_junk_and_bad_encodings_get_file_and_line(raw: bytes, line: int, words: str,
                                                        tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_bytes(raw)
    with pytest.raises(ConfigError) as e:
        load([str(path)])
    assert e.value.file and e.value.file.endswith("c.yaml") and e.value.line == line
    assert words in e.value.message and "unicode string" not in str(e.value)


def test_json_config_with_escaped_non_bmp_characters_loads(tmp_path: Path) -> None:
    cfg = {"prompts": ["Say {{x}} \U0001f600"], "providers": ["echo"],
           "tests": [{"vars": {"x": "hi \U0001f600"}, "assert": [{"type": "contains", "value": "\U0001f600"}]}]}
    path = tmp_path / "c.json"
    path.write_text(json.dumps(cfg, indent=2))  # ensure_ascii: "\ud83d\ude00"
    assert "\\ud83d\\ude00" in path.read_text()
    suite = load([str(path)])
    assert suite.tests[0].vars == {"x": "hi \U0001f600"}
    doc = parse_data(path.read_text(), "c.json")
    assert doc["tests"].loc(0).line == 9  # lines are kept


def test_json_the_yaml_reader_rejects_still_loads_as_a_mapping() -> None:
    doc = parse_data('{"prompts": ["a \\ud83d b"],\n "x": 1}', "c.json")  # a lone surrogate
    assert doc["x"] == 1 and doc.loc("x").file == "c.json"


def test_a_huge_regex_value_is_a_config_error_before_it_is_compiled(tmp_path: Path) -> None:
    """Issue 13: a 4 MB regex value made validate take 5 s and 640 MB."""
    pattern = "(a|b)" * 800_000  # 4 MB
    cfg = tmp_path / "c.yaml"
    cfg.write_text("prompts: [hi]\nproviders: [echo]\ntests:\n  - assert:\n      - type: regex\n"
                   f"        value: '{pattern}'\n", encoding="utf-8")
    started = time.perf_counter()
    with pytest.raises(ConfigError) as info:
        load([str(cfg)])
    assert time.perf_counter() - started < 3.0
    assert "limit is 10,000" in str(info.value) and info.value.line == 6


@pytest.mark.parametrize("name,text,line", [
    ("deep.json", '{"prompts": ["x"],\n "providers": ["echo"],\n "tests": ' + "[" * 1000 + "]" * 1000 + "}\n", 3),
    ("deep.yaml", HEAD + "tests:\n  - vars: {v: " + "[" * 1000 + "]" * 1000 + "}\n", 4),
    ("deep.yml", HEAD + "tests:\n  - vars:\n      v:\n        " + "- " * 1000 + "x\n", 6),
])
def test_validate_of_a_1000_level_nested_file_is_a_config_error_with_its_line(name: str, text: str, line: int,
                                                                              tmp_path: Path) -> None:
    """Issue 23: whatever the PyYAML version (libyaml >= 0.2.5 stops at 1,000 levels with its own words), the
    CLI reports FILE:LINE, exit 2, no traceback."""
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    r = subprocess.run([sys.executable, "-m", "evalrun", "validate", str(path)], capture_output=True, text=True,
                       timeout=60, cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    assert f"{name}:{line}:" in r.stderr and "Traceback" not in r.stderr
    assert "nest" in r.stderr


def test_validate_of_a_1000_level_nested_jsonl_row_is_a_config_error_with_its_line(tmp_path: Path) -> None:
    (tmp_path / "t.jsonl").write_text('{"vars": {"x": 1}}\n{"vars": {"x": ' + "[" * 1000 + "]" * 1000 + "}}\n")
    (tmp_path / "c.yaml").write_text(HEAD + "tests: file://t.jsonl\n")
    r = subprocess.run([sys.executable, "-m", "evalrun", "validate", "c.yaml"], capture_output=True, text=True,
                       timeout=60, cwd=tmp_path)
    assert r.returncode == 2 and "t.jsonl:2:" in r.stderr and "nested" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr


def test_any_parser_error_is_a_config_error_at_its_line_whatever_the_words(monkeypatch: pytest.MonkeyPatch) -> None:
    """A parser that stops where evalrun's own checks would not (as newer libyaml does at its nesting limit) is
    worded from its mark, not its message: FILE:LINE and a hint."""
    import yaml

    from evalrun.config.readers import yamldoc

    class Stopping(yamldoc._Loader):
        def get_single_node(self) -> Any:
            raise yaml.scanner.ScannerError("while doing something new", None, "words never seen before",
                                            yaml.Mark("f", 0, 2, 7, None, None))

    monkeypatch.setattr(yamldoc, "_Loader", Stopping)
    with pytest.raises(ConfigError) as e:
        yamldoc.parse_yaml("a: 1\nb: 2\nc: [[[x]]]\n", "f.yaml")
    assert (e.value.file, e.value.line) == ("f.yaml", 3) and e.value.hint


def test_a_yaml_or_json_document_too_large_to_hold_names_the_file_and_the_streamed_formats(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from evalrun.config.readers import located

    monkeypatch.setattr(located, "MAX_DOC_CHARS", 2000)
    rows = "".join(f"  - vars: {{x: 'question {i}'}}\n" for i in range(200))
    for name, text in (("t.yaml", rows), ("t.json", json.dumps([{"vars": {"x": i}} for i in range(200)]))):
        (tmp_path / name).write_text(text)
        (tmp_path / "c.yaml").write_text(HEAD + f"tests: file://{name}\n")
        with pytest.raises(ConfigError) as e:
            load([str(tmp_path / "c.yaml")])
        assert e.value.file and e.value.file.endswith(name) and e.value.line == 1
        assert "too large" in e.value.message and "JSONL" in (e.value.hint or "")
    (tmp_path / "t.jsonl").write_text("".join(json.dumps({"vars": {"x": i}}) + "\n" for i in range(200)))
    (tmp_path / "c.yaml").write_text(HEAD + "tests: file://t.jsonl\n")
    assert len(load([str(tmp_path / "c.yaml")]).tests) == 200  # streamed: no size limit
