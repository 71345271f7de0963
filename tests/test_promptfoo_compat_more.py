"""More promptfoo features (issue 11, continued): ignored keys warn, per-prompt config, storeOutputAs,
CSV prompt files, inline JavaScript transforms."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from evalrun.config import load
from evalrun.errors import ConfigError
from evalrun.pyexpr import looks_like_js
from tests.fakeserver import FakeOpenAI
from tests.test_promptfoo_compat_features import run_suite, write

needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="node not installed")


# ------------------------------------------------------------------ keys promptfoo ignores
def test_ignored_keys_warn_with_their_line_and_strict_makes_them_errors(tmp_path: Path) -> None:
    cfg = write(tmp_path, {"promptfooconfig.yaml": (
        "prompts: ['hi {{x}}']\nproviders: [echo]\nmaxConcurrency: 3\n"
        "tests:\n  - vars: {x: 1}\n    transform: output.length\n"
        "    assert:\n      - type: contains\n        value: HI\n        ignoreCase: true\n")})
    suite = load([str(cfg)])
    assert len(suite.tests) == 1 and suite.tests[0].asserts[0].type == "contains"
    text = "\n".join(suite.warnings)
    assert "promptfooconfig.yaml:3: maxConcurrency: unknown key 'maxConcurrency'" in text
    assert "promptfooconfig.yaml:6: tests[0].transform" in text and "ignoreCase" in text
    with pytest.raises(ConfigError) as e:
        load([str(cfg)], strict=True)
    assert e.value.line == 3 and "maxConcurrency" in str(e.value)


def test_a_near_miss_of_a_valid_key_stays_an_error(tmp_path: Path) -> None:
    cfg = write(tmp_path, {"promptfooconfig.yaml": "prompts: [hi]\nproviders: [echo]\ntets: [{vars: {x: 1}}]\n"})
    with pytest.raises(ConfigError) as e:
        load([str(cfg)])
    assert e.value.line == 3 and "tests" in (e.value.hint or "")


def test_eval_prints_the_warning_and_strict_exits_2(tmp_path: Path) -> None:
    import subprocess
    import sys

    cfg = write(tmp_path, {"promptfooconfig.yaml": "prompts: [hi]\nproviders: [echo]\nvars: {a: 1}\n"})
    done = subprocess.run([sys.executable, "-m", "evalrun", "eval", str(cfg), "--no-cache", "--no-table",
                           "--no-progress-bar", "--results-file", str(tmp_path / "r.jsonl")],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0 and "warning: " in done.stderr and ":3: vars: unknown key 'vars'" in done.stderr
    done = subprocess.run([sys.executable, "-m", "evalrun", "validate", "--strict", str(cfg)],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 2 and ":3:" in done.stderr


# ------------------------------------------------------------------ per-prompt config
def test_prompt_config_reaches_the_provider_call(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeOpenAI() as server:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        cfg = write(tmp_path, {"promptfooconfig.yaml": (
            "prompts:\n  - raw: 'a {{x}}'\n    label: json\n    config: {temperature: 0.25, "
            "response_format: {type: json_object}}\n  - b {{x}}\n"
            f"providers:\n  - id: openai:chat:gpt-4o-mini\n    config: {{apiBaseUrl: '{server.url}', "
            "temperature: 0.9}\ntests: [{vars: {x: 1}}]\n")})
        rows = run_suite(cfg)
        assert [r.status for r in rows] == ["pass", "pass"]
        by_prompt = {req["messages"][-1]["content"]: req for req in server.requests}
    assert by_prompt["a 1"]["temperature"] == 0.25 and by_prompt["a 1"]["response_format"] == {"type": "json_object"}
    assert by_prompt["b 1"]["temperature"] == 0.9 and "response_format" not in by_prompt["b 1"]


def test_prompt_config_must_be_a_mapping(tmp_path: Path) -> None:
    cfg = write(tmp_path, {"promptfooconfig.yaml": "prompts:\n  - raw: hi\n    config: 3\nproviders: [echo]\n"})
    with pytest.raises(ConfigError) as e:
        load([str(cfg)])
    assert e.value.line == 3 and "mapping" in str(e.value)


# ------------------------------------------------------------------ storeOutputAs
def _echo_last(body: dict[str, Any]) -> dict[str, Any]:
    return {"content": body["messages"][-1]["content"].upper()}


def test_store_output_as_feeds_later_tests_in_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeOpenAI(default=_echo_last) as server:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        cfg = write(tmp_path, {"promptfooconfig.yaml": (
            f"prompts: ['say {{{{message}}}}']\nproviders:\n  - id: openai:gpt-4o-mini\n"
            f"    config: {{apiBaseUrl: '{server.url}'}}\n"
            "tests:\n  - vars: {message: kiwi fruit}\n    options: {storeOutputAs: fav, transform: \"output.split(' ')[1]\"}\n"
            "  - vars: {message: 'why {{fav}}?'}\n    options: {storeOutputAs: reason}\n"
            "  - vars: {message: '{{fav}} / {{reason}}'}\n")})
        run_suite(cfg)
        sent = [req["messages"][-1]["content"] for req in server.requests]
    assert sent == ["say kiwi fruit", "say why KIWI?", "say KIWI / SAY WHY KIWI?"]


def test_store_output_as_must_name_a_var(tmp_path: Path) -> None:
    cfg = write(tmp_path, {"promptfooconfig.yaml": (
        "prompts: [hi]\nproviders: [echo]\ntests:\n  - options: {storeOutputAs: 'not a name'}\n")})
    with pytest.raises(ConfigError) as e:
        load([str(cfg)])
    assert e.value.line == 4 and "storeOutputAs" in str(e.value)


# ------------------------------------------------------------------ CSV prompt files
def test_csv_prompt_file_with_header_labels_and_a_chat_row(tmp_path: Path) -> None:
    cfg = write(tmp_path, {
        "promptfooconfig.yaml": "prompts: [file://prompts.csv]\nproviders: [echo]\ntests: [{vars: {t: x}}]\n",
        "prompts.csv": 'prompt,label\n"Tell me about {{t}}",Basic\n'
                       '"[{""role"":""user"",""content"":""Explain {{t}}""}]",Chat\n'})
    suite = load([str(cfg)])
    assert [p.label for p in suite.prompts] == ["Basic", "Chat"]
    assert isinstance(suite.prompts[1].raw, list)  # a chat
    cfg2 = write(tmp_path, {"promptfooconfig.yaml": "prompts: [file://p.csv]\nproviders: [echo]\n",
                            "p.csv": "one\ntwo\n"})
    assert [p.raw for p in load([str(cfg2)]).prompts] == ["one", "two"]


def test_csv_prompt_with_bad_template_is_an_error(tmp_path: Path) -> None:
    cfg = write(tmp_path, {"promptfooconfig.yaml": "prompts: [file://p.csv]\nproviders: [echo]\n",
                           "p.csv": "prompt\n\"{{ x | nosuch }}\"\n"})
    with pytest.raises(ConfigError, match="nosuch"):
        load([str(cfg)])


# ------------------------------------------------------------------ inline JavaScript
@pytest.mark.parametrize(("code", "js"), [
    ("JSON.parse(output)", True), ("output.length", True), ("output.color === 'purple'", True),
    ("output.trim().toLowerCase()", True), ("const x = 1; x + 1", True), ("output.upper()", False),
    ("json.loads(output)['a']", False), ("output.split(' ')[0]", False), ("len(output) > 3", False),
    ("'&&' in output", False), ("x = output.strip()\nreturn x", False), ("file://t.js", False),
])
def test_which_inline_code_is_javascript(code: str, js: bool) -> None:
    assert looks_like_js(code) is js


@needs_node
def test_inline_js_transforms_at_every_level(tmp_path: Path) -> None:
    cfg = write(tmp_path, {"promptfooconfig.yaml": (
        "prompts: ['{{\"{\"}}\"a\": [1, 2, 3], \"n\": \"{{n}}\"}']\nproviders: [echo]\n"
        "tests:\n  - vars: {n: kiwi}\n    options:\n      transformVars: '({n: vars.n.toUpperCase()})'\n"
        "      transform: JSON.parse(output)\n"
        "    assert:\n      - type: equals\n        value: KIWI\n        transform: output.n || ''\n"
        "      - type: equals\n        value: '3'\n        transform: String(output.a.length)\n"
        "      - type: is-json\n")})
    rows = run_suite(cfg)
    assert [(r.status, r.reason) for r in rows] == [("pass", rows[0].reason)], rows[0].reason
    assert json.loads(rows[0].output) == {"a": [1, 2, 3], "n": "KIWI"}


@needs_node
def test_a_transform_object_reaches_later_transforms_and_code_assertions_as_an_object(tmp_path: Path) -> None:
    """promptfoo hands the object a transform returns on: JSON.parse of it again fails there too."""
    cfg = write(tmp_path, {"promptfooconfig.yaml": (
        "prompts: ['{{\"{\"}}\"color\": \"{{c}}\", \"n\": 3}']\nproviders: [echo]\n"
        "defaultTest:\n  options:\n    transform: JSON.parse(output)\n"
        "tests:\n  - vars: {c: red}\n    assert:\n"
        "      - {type: javascript, value: \"output.color === 'red' && output.n === 3\"}\n"
        "      - {type: python, value: 'output[\"color\"] == \"red\" and isinstance(output, dict)'}\n"
        "      - {type: contains, value: '\"color\"'}\n"
        "  - vars: {c: blue}\n    assert:\n      - {type: javascript, value: \"output.color === 'red'\"}\n"
        "  - vars: {c: red}\n    assert:\n      - {type: equals, value: red, transform: JSON.parse(output).color}\n")})
    rows = run_suite(cfg)
    rows = sorted(rows, key=lambda r: r.test_index)
    assert [r.status for r in rows] == ["pass", "fail", "error"], [r.reason for r in rows]
    assert "[object Object]" in rows[2].reason


@needs_node
def test_inline_js_syntax_error_is_a_config_error_at_its_line(tmp_path: Path) -> None:
    cfg = write(tmp_path, {"promptfooconfig.yaml": (
        "prompts: [hi]\nproviders: [echo]\ntests:\n  - vars: {}\n    assert:\n"
        "      - {type: contains, value: h, transform: 'output.a === ('}\n")})
    with pytest.raises(ConfigError) as e:
        load([str(cfg)])
    assert e.value.line == 6 and "JavaScript syntax error" in str(e.value)
    cfg = write(tmp_path, {"promptfooconfig.yaml": (  # a test-level transform: checked when its case runs
        "prompts: [hi]\nproviders: [echo]\ntests:\n  - options: {transform: 'output.a === ('}\n")})
    rows = run_suite(cfg)
    assert rows[0].status == "error" and "JavaScript syntax error" in (rows[0].error or "")


def test_js_transform_without_node_is_a_config_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from evalrun import jsnode

    monkeypatch.setattr(jsnode, "node_path", lambda: None)
    cfg = write(tmp_path, {"promptfooconfig.yaml": (
        "prompts: [hi]\nproviders: [echo]\ntests:\n  - vars: {}\n    assert:\n"
        "      - {type: equals, value: '2', transform: String(output.length)}\n")})
    with pytest.raises(ConfigError) as e:
        load([str(cfg)])
    assert e.value.line == 6 and "node" in str(e.value)
