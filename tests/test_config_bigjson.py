"""Large `.json` configs and test files (a few MB): every value keeps its line, so errors and warnings deep in
them name the exact line (config/readers/jsondoc.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evalrun.config import load
from evalrun.errors import ConfigError

N = 3_000  # ~1 MB once indented


def _tests(n: int = N) -> list[dict[str, Any]]:
    return [{"description": f"test {i}", "vars": {"question": f"question number {i}", "topic": f"t{i % 7}"},
             "assert": [{"type": "contains", "value": f"number {i}"}, {"type": "icontains", "value": "QUESTION"},
                        {"type": "regex", "value": "number \\d+"}]} for i in range(n)]


def _write(tmp_path: Path, tests: list[dict[str, Any]], *, raw_tail: str = "") -> Path:
    doc = {"description": "big", "providers": ["echo"], "prompts": ["Answer {{question}} about {{topic}}"],
           "tests": tests}
    text = json.dumps(doc, indent=1)
    if raw_tail:  # replace the last test's closing with hand-written JSON
        text = text.replace('"description": "big"', raw_tail, 1)
    path = tmp_path / "evalrun.json"
    path.write_text(text, encoding="utf-8")
    assert len(text) >= 900_000
    return path


def _outcome(path: Path) -> tuple[str, Any]:
    try:
        suite = load([str(path)])
    except ConfigError as e:
        return "error", str(e)
    return "ok", ([(t.description, dict(t.vars), t.loc, [(a.type, a.value, a.key_path) for a in t.asserts])
                   for t in suite.tests], suite.warnings)




def test_large_json_loads_the_same_tests_and_lines(tmp_path: Path) -> None:
    outcome = _outcome(_write(tmp_path, _tests()))
    assert outcome[0] == "ok"
    tests = outcome[1][0]
    text = (tmp_path / "evalrun.json").read_text().splitlines()
    line = tests[1234][2].line  # each test keeps its own line
    assert text[line - 1].strip() == "{" and '"test 1234"' in text[line]


def _bad(i: int, change: dict[str, Any]) -> list[dict[str, Any]]:
    tests = _tests()
    tests[i]["assert"][1].update(change)
    return tests


@pytest.mark.parametrize("tests,key", [
    (_bad(2500, {"type": "containz"}), "tests[2500].assert[1].type"),  # unknown type (did-you-mean)
    (_bad(2600, {"type": "regex", "value": "([a-z"}), "tests[2600].assert[1].value"),  # the handler's check
    (_bad(2700, {"value": "{{questoin}}"}), "tests[2700].assert[1]"),  # a misspelled template var
    (_bad(2800, {"weight": -1}), "tests[2800].assert[1].weight"),  # schema / range
    (_bad(2900, {"threshold": "high"}), "tests[2900].assert[1].threshold"),
])
def test_errors_deep_in_a_large_json_name_the_exact_line(tests: list[dict[str, Any]], key: str, tmp_path: Path) -> None:
    path = _write(tmp_path, tests)
    outcome = _outcome(path)
    assert outcome[0] == "error"
    assert "evalrun.json:" in outcome[1] and key in outcome[1]
    line = int(outcome[1].split("evalrun.json:", 1)[1].split(":", 1)[0])
    text = path.read_text().splitlines()
    field = key.rsplit(".", 1)[-1]
    assert (f'"{field}"' in text[line - 1]) if not field.endswith("]") else text[line - 1].strip() == "{"
    assert line > 2000 * 10  # deep in the file, not the test's first line


def test_an_undefined_variable_warning_names_its_line(tmp_path: Path) -> None:
    path = _write(tmp_path, _bad(1700, {"value": "{{nowhere}}"}))
    outcome = _outcome(path)
    assert outcome[0] == "ok"
    [warning] = outcome[1][1]
    assert "undefined template variable 'nowhere'" in warning and "tests[1700].assert[1]" in warning
    line = int(warning.split("evalrun.json:", 1)[1].split(":", 1)[0])
    assert path.read_text().splitlines()[line - 1].strip() == "{" and line > 1500 * 10


def test_an_ignored_key_warning_names_its_line(tmp_path: Path) -> None:
    path = _write(tmp_path, _bad(1500, {"ignoreCase": True}))
    outcome = _outcome(path)
    assert outcome[0] == "ok"
    [warning] = outcome[1][1]
    line = int(warning.split("evalrun.json:", 1)[1].split(":", 1)[0])
    assert '"ignoreCase"' in path.read_text().splitlines()[line - 1]


def test_a_duplicate_key_deep_in_a_large_json_names_both_lines(tmp_path: Path) -> None:
    path = _write(tmp_path, _tests())
    text = path.read_text()
    needle = '"value": "number 2222"'
    path.write_text(text.replace(needle, f'{needle}, "value": "again"'), encoding="utf-8")
    outcome = _outcome(path)
    assert outcome[0] == "error"
    assert "duplicate key 'value'" in outcome[1]


def test_a_large_json_tests_file_reports_the_row_line(tmp_path: Path) -> None:
    tests = _bad(2100, {"type": "not-containz"})
    (tmp_path / "tests.json").write_text(json.dumps(tests, indent=2), encoding="utf-8")
    path = tmp_path / "c.yaml"
    path.write_text("providers: [echo]\nprompts: ['{{question}} {{topic}}']\ntests: file://tests.json\n")
    outcome = _outcome(path)
    assert outcome[0] == "error"
    assert "tests.json:" in outcome[1] and "[2100].assert[1].type" in outcome[1]


@pytest.mark.parametrize("old,new", [
    ('"value": "number 2345"', '"value": "number 2345",'),  # a trailing comma deep in a test
    ('"description": "test 2346"', '"description" "test 2346"'),  # a missing colon in a test's own keys
    ('"description": "test 2347",', '"description": "test 2347"'),  # a missing comma
    ('"providers"', '"description": "twice", "providers"'),  # a duplicate key at the top
])
def test_syntax_errors_in_a_large_json_are_worded_as_json_loads_words_them(
        old: str, new: str, tmp_path: Path) -> None:
    path = _write(tmp_path, _tests())
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    outcome = _outcome(path)
    assert outcome[0] == "error"
    assert "invalid JSON" in outcome[1] or "duplicate key" in outcome[1]


def test_a_large_json_with_text_after_it_is_an_error(tmp_path: Path) -> None:
    path = _write(tmp_path, _tests())
    path.write_text(path.read_text() + "\n{}", encoding="utf-8")
    with pytest.raises(ConfigError, match="invalid JSON: Extra data"):
        load([str(path)])


@pytest.mark.parametrize("name,ref_key", [("c.json", '"\\u0024ref"'), ("c.yaml", '"\\x24ref"'),
                                          ("d.yaml", '"\\U00000024ref"')])
def test_a_ref_written_with_an_escaped_dollar_is_still_resolved(name: str, ref_key: str, tmp_path: Path) -> None:
    # the loader skips the `$ref` walk only when the text cannot hold one (no `$ref`, no escape of `$`)
    doc = ('{"prompts": ["{{x}}"], "providers": ["echo"], "assertionTemplates": {"p": {"type": "icontains", '
           f'"value": "A"}}}}, "tests": [{{"vars": {{"x": 1}}, "assert": [{{{ref_key}: "#/assertionTemplates/p"}}]}}]}}')
    path = tmp_path / name
    path.write_text(doc, encoding="utf-8")
    [test] = load([str(path)]).tests
    assert [(a.type, a.value) for a in test.asserts] == [("icontains", "A")]


def test_several_errors_in_one_test_of_a_large_json_are_all_at_their_lines(tmp_path: Path) -> None:
    tests = _tests()
    tests[2500]["assert"][2].update({"weight": -1})
    tests[2500]["assert"][0].update({"weight": -5, "threshold": "high"})
    tests[2700]["assert"][1].update({"weight": -1})
    outcome = _outcome(_write(tmp_path, tests))
    assert outcome[0] == "error"
    lines = [int(t.split("evalrun.json:", 1)[1].split(":", 1)[0]) for t in outcome[1].splitlines()
             if "evalrun.json:" in t]
    assert len(lines) >= 3 and lines == sorted(lines) and len(set(lines)) == len(lines)
