"""Keys of a test beyond evalrun's (`expected` in a JSONL row, in a YAML test, from a generator) stay on the test
and reach code assertions as `context.test.<key>`, as promptfoo hands the whole test to them; a near-miss of a
test key stays an error, and an `options` key written on the test itself is kept with a warning."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from evalrun.config import load
from evalrun.errors import ConfigError
from tests.test_promptfoo_compat_features import run_suite, write

needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="node not installed")

ROWS = [{"vars": {"q": "paris"}, "expected": "paris", "assert": [{"type": "python", "value": "file://check.py"}]},
        {"vars": {"q": "rome"}, "expected": "berlin", "assert": [{"type": "python", "value": "file://check.py"}]}]
CHECK = ("def get_assert(output, context):\n"
         "    test = context['test']\n"
         "    return output == test['expected'] and test['vars']['q'] == output and len(test['assert']) >= 1\n")


def test_extra_keys_of_jsonl_rows_reach_python_assertions(tmp_path: Path) -> None:
    cfg = write(tmp_path, {
        "promptfooconfig.yaml": "prompts: ['{{q}}']\nproviders: [echo]\ntests: file://tests.jsonl\n",
        "tests.jsonl": "".join(json.dumps(r) + "\n" for r in ROWS),
        "check.py": CHECK})
    suite = load([str(cfg)])
    assert suite.warnings == () and [t.extra for t in suite.tests] == [{"expected": "paris"}, {"expected": "berlin"}]
    assert [r.status for r in run_suite(cfg)] == ["pass", "fail"]


@needs_node
def test_extra_keys_of_yaml_tests_and_generators_reach_javascript(tmp_path: Path) -> None:
    cfg = write(tmp_path, {
        "promptfooconfig.yaml": (
            "prompts: ['{{q}}']\nproviders: [echo]\n"
            "defaultTest:\n  assert:\n    - type: javascript\n"
            "      value: output === context.test.expected && context.test.source.n === 1\n"
            "tests:\n  - vars: {q: a}\n    expected: a\n    source: {n: 1}\n  - file://gen.py\n"),
        "gen.py": "def generate_tests():\n    return [{'vars': {'q': 'b'}, 'expected': 'c', 'source': {'n': 1}}]\n"})
    suite = load([str(cfg)])
    assert suite.warnings == () and suite.tests[1].extra == {"expected": "c", "source": {"n": 1}}
    assert [r.status for r in run_suite(cfg)] == ["pass", "fail"]


def test_a_near_miss_stays_an_error_and_an_options_key_warns(tmp_path: Path) -> None:
    bad = write(tmp_path / "a", {"promptfooconfig.yaml": "prompts: [x]\nproviders: [echo]\ntests: file://t.jsonl\n",
                                 "t.jsonl": '{"vars": {}, "asert": []}\n'})
    with pytest.raises(ConfigError) as e:
        load([str(bad)])
    assert e.value.line == 1 and "did you mean `assert`?" in (e.value.hint or "")
    cfg = write(tmp_path / "b", {"promptfooconfig.yaml": (
        "prompts: [x]\nproviders: [echo]\ntests:\n  - vars: {}\n    transform: output.upper()\n")})
    suite = load([str(cfg)])
    [warning] = suite.warnings
    assert ":5: tests[0].transform: 'transform' directly on a test is not applied" in warning
    assert "options:" in warning and suite.tests[0].extra == {"transform": "output.upper()"}
    with pytest.raises(ConfigError, match="transform"):
        load([str(cfg)], strict=True)
