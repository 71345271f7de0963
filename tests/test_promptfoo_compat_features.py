"""promptfoo features evalrun reads with promptfoo's meaning (issue 11): load, render, bad input at FILE:LINE."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from evalrun import templating
from evalrun.config import load
from evalrun.errors import ConfigError
from evalrun.expand import iter_cases

needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="node not installed")


def write(tmp: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        p = tmp / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return tmp / "promptfooconfig.yaml"


class Row:
    def __init__(self, rec: dict) -> None:
        self.status, self.output = rec.get("status"), rec.get("output")
        self.reason, self.error = rec.get("reason") or "", rec.get("error")
        self.test_index = int(rec.get("test_index") or 0)


def run_suite(cfg: Path) -> list[Row]:
    from evalrun.api import evaluate
    from evalrun.run.store import read_records

    out = cfg.parent / "results.jsonl"
    evaluate(str(cfg), results_file=out, use_cache=False)
    return [Row(rec) for _, rec in read_records(out)]


# ------------------------------------------------------------------ Nunjucks built-ins
def test_load_filter_and_length_and_null() -> None:
    out = templating.render_prompt("{{ (s | load).tone }} {{ xs.length }} {{ 'a' if x == null else 'b' }}",
                                   {"s": '{"tone": "formal"}', "xs": [1, 2, 3], "x": None})
    assert out == "formal 3 a"
    with pytest.raises(Exception, match="not valid JSON"):
        templating.render_prompt("{{ s | load }}", {"s": "nope"})


def test_unknown_filter_stays_a_config_error_at_its_line(tmp_path: Path) -> None:
    cfg = write(tmp_path, {"promptfooconfig.yaml": "prompts: ['{{ x | nosuch }}']\nproviders: [echo]\n"
                                                   "tests: [{vars: {x: 1}}]\n"})
    with pytest.raises(ConfigError) as e:
        load([str(cfg)])
    assert e.value.line == 1 and "nosuch" in str(e.value)


# ------------------------------------------------------------------ nunjucksFilters
def test_python_filter(tmp_path: Path) -> None:
    cfg = write(tmp_path, {
        "f.py": "def shout(v, n=1):\n    return str(v).upper() + '!' * n\n",
        "promptfooconfig.yaml": "prompts: ['{{ x | shout(2) }}']\nproviders: [echo]\n"
                                "nunjucksFilters:\n  shout: file://f.py\ntests: [{vars: {x: hi}}]\n"})
    case = next(iter_cases(load([str(cfg)])))
    assert templating.render_prompt(case.prompt.raw, case.vars) == "HI!!"


@needs_node
def test_js_filter_runs_in_node(tmp_path: Path) -> None:
    cfg = write(tmp_path, {
        "allcaps.js": "module.exports = (s) => String(s).toUpperCase();\n",
        "promptfooconfig.yaml": "prompts: ['say {{ x | allcaps }}']\nproviders: [echo]\n"
                                "nunjucksFilters:\n  allcaps: ./allcaps.js\n"
                                "tests:\n  - vars: {x: hello}\n    assert: [{type: equals, value: say HELLO}]\n"})
    [r] = run_suite(cfg)
    assert r.status == "pass", r.reason


def test_filter_file_missing_or_wrong_kind_is_an_error_at_its_line(tmp_path: Path) -> None:
    cfg = write(tmp_path, {"promptfooconfig.yaml": "prompts: ['{{ x }}']\nproviders: [echo]\n"
                                                   "nunjucksFilters:\n  a: file://nope.js\n"})
    with pytest.raises(ConfigError) as e:
        load([str(cfg)])
    assert e.value.line == 4 and "nope.js" in str(e.value)
    cfg = write(tmp_path, {"f.txt": "x", "promptfooconfig.yaml": "prompts: ['{{ x }}']\nproviders: [echo]\n"
                                                                 "nunjucksFilters:\n  a: file://f.txt\n"})
    with pytest.raises(ConfigError, match="expected a .js or .py file"):
        load([str(cfg)])


# ------------------------------------------------------------------ chat prompts as JSON templates
def test_json_template_prompt_renders_then_parses(tmp_path: Path) -> None:
    cfg = write(tmp_path, {
        "prompt.json": '[\n  {"role": "system", "content": "{{ sys }}"},\n'
                       '  {% for m in history %}{"role": "user", "content": "{{ m }}"},\n  {% endfor %}\n'
                       '  {"role": "user", "content": "{{ q }}"}\n]\n',
        "promptfooconfig.yaml": "prompts: [{id: file://prompt.json, label: chat}]\nproviders: [echo]\n"
                                "tests: [{vars: {sys: S, q: Q, history: [a, b]}, options: {disableVarExpansion: true}}]\n"})
    case = next(iter_cases(load([str(cfg)])))
    out = templating.render_prompt(case.prompt.raw, case.vars)
    assert out == [{"role": "system", "content": "S"}, {"role": "user", "content": "a"},
                   {"role": "user", "content": "b"}, {"role": "user", "content": "Q"}]


def test_conversation_is_an_empty_history() -> None:
    raw = '[{% for c in _conversation %}{"role": "user", "content": "{{ c.input }}"},{% endfor %}' \
          '{"role": "user", "content": "{{ q }}"}]'
    assert templating.render_prompt(raw, {"q": "hi"}) == [{"role": "user", "content": "hi"}]


def test_bad_json_template_syntax_is_a_config_error(tmp_path: Path) -> None:
    cfg = write(tmp_path, {"prompt.json": '[{% for x in y %}]\n',
                           "promptfooconfig.yaml": "prompts: [file://prompt.json]\nproviders: [echo]\n"})
    with pytest.raises(ConfigError, match="template syntax error"):
        load([str(cfg)])


def test_prompt_object_with_raw_file_reference(tmp_path: Path) -> None:
    cfg = write(tmp_path, {"p.txt": "Hello {{ name }}\n",
                           "promptfooconfig.yaml": "prompts:\n  - {id: greet, raw: file://p.txt, label: G}\n"
                                                   "providers: [echo]\ntests: [{vars: {name: Ann}}]\n"})
    suite = load([str(cfg)])
    [p] = suite.prompts
    assert (p.raw, p.label, p.id) == ("Hello {{ name }}", "G", "greet")


# ------------------------------------------------------------------ $ref
def test_ref_to_assertion_templates(tmp_path: Path) -> None:
    cfg = write(tmp_path, {"promptfooconfig.yaml":
                           "prompts: ['arrr {{ x }}']\nproviders: [echo]\n"
                           "assertionTemplates:\n  pirate: {type: icontains, value: ARRR}\n"
                           "tests:\n  - vars: {x: 1}\n    assert:\n      - $ref: '#/assertionTemplates/pirate'\n"
                           "      - {$ref: '#/assertionTemplates/pirate', weight: 2}\n"})
    suite = load([str(cfg)])
    a, b = suite.tests[0].asserts
    assert (a.type, a.value, b.weight) == ("icontains", "ARRR", 2)


def test_ref_to_nothing_is_an_error_at_its_line(tmp_path: Path) -> None:
    cfg = write(tmp_path, {"promptfooconfig.yaml":
                           "prompts: ['{{ x }}']\nproviders: [echo]\n"
                           "assertionTemplates:\n  pirate: {type: icontains, value: a}\n"
                           "tests:\n  - vars: {x: 1}\n    assert:\n      - $ref: '#/assertionTemplates/pirat'\n"})
    with pytest.raises(ConfigError) as e:
        load([str(cfg)])
    assert e.value.line == 8 and "points at nothing" in str(e.value) and "pirate" in (e.value.hint or "")


# ------------------------------------------------------------------ CSV
def test_csv_config_threshold_and_escaped_commas(tmp_path: Path) -> None:
    cfg = write(tmp_path, {
        "tests.csv": "q,__expected1,__expected2,__config:__expected2:threshold,__metadata:tags[]\n"
                     'a,contains:a,python:0.5,0.4,"x,y\\,z, w"\n',
        "promptfooconfig.yaml": "prompts: ['{{ q }}']\nproviders: [echo]\ntests: file://tests.csv\n"})
    [test] = load([str(cfg)]).tests
    assert test.asserts[1].threshold == 0.4 and test.asserts[0].threshold is None
    assert test.metadata == {"tags": ["x", "y,z", "w"], "threshold": 0.4}


@pytest.mark.parametrize("header,msg", [("__config:__expected0:threshold", "bad __config column"),
                                        ("__config:__expected:weight", "unknown config key 'weight'")])
def test_csv_bad_config_column(tmp_path: Path, header: str, msg: str) -> None:
    cfg = write(tmp_path, {"tests.csv": f"q,{header}\na,1\n",
                           "promptfooconfig.yaml": "prompts: ['{{ q }}']\nproviders: [echo]\ntests: tests.csv\n"})
    with pytest.raises(ConfigError, match=msg) as e:
        load([str(cfg)])
    assert e.value.file and e.value.file.endswith("tests.csv") and e.value.line == 1


# ------------------------------------------------------------------ vars
def test_transform_vars_and_vars_from_code(tmp_path: Path) -> None:
    cfg = write(tmp_path, {
        "ctx.py": "def get_var(var_name, prompt, other_vars):\n"
                  "    return {'output': f\"  {var_name}:{other_vars['topic']}  \"}\n",
        "promptfooconfig.yaml":
            "prompts: ['{{ topic }}|{{ context }}|{{ upper }}|{{ line }}|{{ intro }}']\nproviders: [echo]\n"
            "defaultTest:\n  options:\n    transformVars: \"{'upper': vars['topic'].upper()}\"\n"
            "tests:\n  - vars:\n      topic: cats\n      context: file://ctx.py\n"
            "      line: |\n        one line\n      intro: 'about {{topic}}'\n"})
    [r] = run_suite(cfg)
    assert r.output == "cats|context:cats|CATS|one line|about cats", r.reason


def test_transform_vars_returning_no_mapping_is_that_case_error(tmp_path: Path) -> None:
    cfg = write(tmp_path, {"promptfooconfig.yaml":
                           "prompts: ['{{ a }}']\nproviders: [echo]\n"
                           "tests:\n  - vars: {a: 1}\n    options: {transformVars: '42'}\n"})
    [r] = run_suite(cfg)
    assert r.status == "error" and "must return a mapping" in (r.error or "")


@needs_node
def test_js_var_loader_and_js_transform(tmp_path: Path) -> None:
    cfg = write(tmp_path, {
        "v.js": "module.exports = (name, prompt, vars) => ({output: name + '=' + vars.a});\n",
        "t.js": "module.exports = (output, context) => output.toUpperCase();\n",
        "promptfooconfig.yaml": "prompts: ['{{ a }} {{ b }}']\nproviders: [echo]\n"
                                "tests:\n  - vars: {a: x, b: file://v.js}\n    options: {transform: file://t.js}\n"})
    [r] = run_suite(cfg)
    assert r.output == "X B=X", r.reason


def test_var_files_trimmed_and_vars_glob_merged(tmp_path: Path) -> None:
    cfg = write(tmp_path, {"t.txt": "\n  text body \n\n", "vars/v_1.yaml": "a: 1\n", "vars/v_2.yaml": "b: 2\n",
                           "promptfooconfig.yaml": "prompts: ['{{ a }}{{ b }}']\nproviders: [echo]\n"
                                                   "tests:\n  - vars: vars/v_*.yaml\n"
                                                   "  - vars: {a: file://t.txt, b: ''}\n"})
    suite = load([str(cfg)])
    assert suite.tests[0].vars == {"a": 1, "b": 2}
    assert suite.tests[1].vars["a"] == "text body"


def test_test_options_promptfoo_passes_through_are_accepted(tmp_path: Path) -> None:
    cfg = write(tmp_path, {"promptfooconfig.yaml": "prompts: ['{{ a }}']\nproviders: [echo]\n"
                                                   "defaultTest: {options: {timeout: 5, maxTokens: 9}}\n"
                                                   "tests: [{vars: {a: 1}, options: {trasnform: x}}]\n"})
    with pytest.raises(ConfigError) as e:  # a near-miss of a real key stays an error
        load([str(cfg)])
    assert e.value.line == 4 and "trasnform" in str(e.value)


