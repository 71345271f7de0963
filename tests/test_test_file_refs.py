"""`file://` paths inside test files (tests.yaml, tests.json, rows of tests.jsonl) resolve from the config's folder,
as promptfoo resolves them; a path found only next to the test file is read with a warning (promptfoo would not
find it), an error under --strict."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalrun.config import load
from evalrun.errors import ConfigError
from tests.test_promptfoo_compat_features import run_suite, write

CHECK = "def get_assert(output, context):\n    return '{word}' in output\n"


def _project(tmp_path: Path, tests_file: str, tests_text: str) -> Path:
    return write(tmp_path, {
        "promptfooconfig.yaml": f"prompts: ['Say {{{{word}}}} {{{{extra}}}}']\nproviders: [echo]\n"
                                f"tests: file://{tests_file}\n",
        "assertions/check_hello.py": CHECK.format(word="hello"),
        "data/extra.txt": "EXTRA\n",
        "fixtures/check_bye.py": CHECK.format(word="bye"),
        tests_file: tests_text,
    })


def test_paths_in_a_test_file_are_relative_to_the_config(tmp_path: Path) -> None:
    cfg = _project(tmp_path, "fixtures/tests.json", json.dumps([
        {"vars": {"word": "hello", "extra": "file://data/extra.txt"},
         "assert": [{"type": "python", "value": "file://assertions/check_hello.py"}]}]))
    suite = load([str(cfg)])
    assert suite.warnings == () and suite.tests[0].vars["extra"] == "EXTRA"
    rows = run_suite(cfg)
    assert [(r.status, r.output) for r in rows] == [("pass", "Say hello EXTRA")]


def test_a_path_only_next_to_the_test_file_is_read_with_a_warning(tmp_path: Path) -> None:
    cfg = _project(tmp_path, "fixtures/tests.jsonl", "\n".join([
        json.dumps({"vars": {"word": "hello", "extra": "x"},
                    "assert": [{"type": "python", "value": "file://assertions/check_hello.py"}]}),
        json.dumps({"vars": {"word": "bye", "extra": "y"},
                    "assert": [{"type": "python", "value": "file://check_bye.py"}]})]) + "\n")
    suite = load([str(cfg)])
    [warning] = suite.warnings
    assert "tests.jsonl:2: " in warning and "check_bye.py is not in the config's folder" in warning
    assert "file://fixtures/check_bye.py" in warning and "promptfoo would not find it" in warning
    assert [r.status for r in run_suite(cfg)] == ["pass", "pass"]
    with pytest.raises(ConfigError) as e:
        load([str(cfg)], strict=True)
    assert e.value.line == 2 and "check_bye.py" in e.value.message


def test_a_path_found_nowhere_is_an_error_at_the_test_file_line(tmp_path: Path) -> None:
    cfg = _project(tmp_path, "fixtures/tests.yaml", (
        "- vars: {word: hello, extra: x}\n  assert:\n    - type: python\n      value: file://nowhere.py\n"))
    with pytest.raises(ConfigError) as e:
        load([str(cfg)])
    assert Path(e.value.file or "").name == "tests.yaml" and e.value.line == 4
    assert "file not found: nowhere.py" in e.value.message and "config file's folder" in (e.value.hint or "")
