"""promptfoo semantics that the held-back real configs of issue 26 needed (tests/compat/real_configs, SOURCE.md):
a prompt with a tag not closed on its line is sent as written, a `file://` script as an assertion's value,
a test's own `provider`. Each: load, run, and the bad input at FILE:LINE."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalrun import templating
from evalrun.config import load
from evalrun.errors import ConfigError
from tests.fakeserver import FakeOpenAI
from tests.test_promptfoo_compat_features import needs_node, run_suite, write

HANDLEBARS = """\
prompts:
  - id: rag
    raw: |
      Question: {{question}}
      Context:
      {{#each chunks}}
      - {{this}}
      {{/each}}
providers: [echo]
tests:
  - vars: {question: Why?, chunks: [a, b]}
    assert:
      - {type: not-contains, value: "{{question}}"}   # renders as "Why?", which the prompt never got
"""


@pytest.mark.parametrize(("text", "found"), [
    ("a {{#each xs}} b", ("{#", 1)),           # Handlebars: `{#` opens a Nunjucks comment that never closes
    ("x\nif (a) {{\n  b }}", ("{{", 2)),       # code braces
    ("{% if x\n%}y{% endif %}", ("{%", 1)),
    ("{{ a }} {% if b %}c{% endif %} {# note #}", None),
    ("{% raw %}{{#each xs}}{% endraw %}", None),
])
def test_partial_tag_is_promptfoos_rule(text: str, found: tuple[str, int] | None) -> None:
    assert templating.partial_tag(text) == found


def test_a_prompt_with_an_unclosed_tag_is_sent_as_written(tmp_path: Path) -> None:
    """promptfoo 0.121.20 wraps such a prompt in {% raw %} (autoWrapRawIfPartialNunjucks): the model gets the
    text with `{{question}}` unfilled, one case per chunk; evalrun the same, with a warning at the prompt's line."""
    cfg = write(tmp_path, {"promptfooconfig.yaml": HANDLEBARS})
    suite = load([str(cfg)])
    [warning] = suite.warnings
    assert ":2: prompts[0]: prompt " in warning and "`{#` on its template line 3 is not closed" in warning
    rows = run_suite(cfg)
    assert len(rows) == 2 and all(r.status == "pass" for r in rows)
    assert rows[0].output == "Question: {{question}}\nContext:\n{{#each chunks}}\n- {{this}}\n{{/each}}\n"


def test_strict_makes_the_unclosed_tag_an_error_at_the_prompt(tmp_path: Path) -> None:
    cfg = write(tmp_path, {"promptfooconfig.yaml": HANDLEBARS})
    with pytest.raises(ConfigError) as caught:
        load([str(cfg)], strict=True)
    assert caught.value.line == 2 and "not closed" in str(caught.value) and "{% for x in xs %}" in caught.value.hint


def test_a_closed_tag_that_does_not_parse_stays_a_config_error(tmp_path: Path) -> None:
    cfg = write(tmp_path, {"promptfooconfig.yaml": 'prompts: [\'[{{"a": 1}}] {{x}}\']\nproviders: [echo]\n'})
    with pytest.raises(ConfigError, match="template syntax error"):
        load([str(cfg)])


# ------------------------------------------------------------------ a test's own provider
def _test_provider_cfg(tmp_path: Path, url: str, test_provider: str) -> Path:
    return write(tmp_path, {"promptfooconfig.yaml": f"""\
prompts: ['{{{{q}}}}']
providers:
  - id: openai:chat:column-model
    label: column
    config: {{apiBaseUrl: "{url}"}}
    transform: output + ' (column transform)'
tests:
  - vars: {{q: plain}}
    assert: [{{type: icontains, value: plain}}]
  - vars: {{q: json mode}}
{test_provider}
    assert: [{{type: icontains, value: json mode}}]
"""})


def test_a_tests_own_provider_answers_its_cases(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    """promptfoo calls test.provider instead of the column's provider (callActiveProvider); the case keeps its
    column's name and transform (a real config switches some tests to JSON mode this way)."""
    fake_openai.default = lambda body: {"content": f"{body['model']}: {body['messages'][-1]['content']}"}
    own = ("    provider:\n      id: openai:chat:json-model\n"
           f"      config: {{apiBaseUrl: \"{fake_openai.url}\", response_format: {{type: json_object}}}}")
    cfg = _test_provider_cfg(tmp_path, fake_openai.url, own)
    rows = sorted(run_suite(cfg), key=lambda r: r.test_index)
    assert [r.output for r in rows] == ["column-model: plain (column transform)",
                                        "json-model: json mode (column transform)"]
    sent = {r["model"]: r.get("response_format") for r in fake_openai.requests}
    assert sent == {"column-model": None, "json-model": {"type": "json_object"}}
    from evalrun.api import evaluate
    from evalrun.run.store import read_records

    out = tmp_path / "r2.jsonl"
    evaluate(str(cfg), results_file=out, use_cache=False)
    assert {rec["provider"] for _, rec in read_records(out)} == {"column"}


def test_default_tests_provider_applies_to_every_test(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    fake_openai.default = lambda body: {"content": body["model"]}
    cfg = write(tmp_path, {"promptfooconfig.yaml": f"""\
prompts: ['{{{{q}}}}']
providers: [{{id: openai:chat:column-model, config: {{apiBaseUrl: "{fake_openai.url}"}}}}]
defaultTest:
  provider: {{id: openai:chat:default-model, config: {{apiBaseUrl: "{fake_openai.url}"}}}}
tests:
  - vars: {{q: a}}
  - vars: {{q: b}}
    provider: {{id: openai:chat:own-model, config: {{apiBaseUrl: "{fake_openai.url}"}}}}
"""})
    assert sorted(r.output or "" for r in run_suite(cfg)) == ["default-model", "own-model"]


def test_a_bad_test_provider_is_a_config_error_at_its_line(tmp_path: Path) -> None:
    cfg = _test_provider_cfg(tmp_path, "http://127.0.0.1:9", "    provider: [echo, echo]")
    with pytest.raises(ConfigError) as caught:
        load([str(cfg)])
    assert caught.value.line == 11 and "tests[1].provider" in str(caught.value)
    cfg = _test_provider_cfg(tmp_path, "http://127.0.0.1:9", "    provider: file://missing.py")
    with pytest.raises(ConfigError, match="missing.py"):
        load([str(cfg)])


# ------------------------------------------------------------------ a script as an assertion's value
SCRIPT_VALUES = """\
prompts: ['{{answer}}']
providers: [echo]
tests:
  - vars: {answer: '{"verdict": "approve", "findings": []}'}
    assert:
      - {type: is-json, value: file://schema.js:reviewSchema}
      - {type: contains, value: file://expect.py:word}
      - {type: not-contains, value: file://expect.py:other}
  - vars: {answer: '{"verdict": 3}'}
    assert:
      - {type: is-json, value: file://schema.js:reviewSchema}
  - vars: {answer: 'x'}
    assert:
      - {type: contains, value: file://expect.py:verdict}
"""
SCHEMA_JS = ("exports.reviewSchema = (output, context) => ({type: 'object', required: ['verdict'],\n"
             "  properties: {verdict: {type: 'string'}}});\n")
EXPECT_PY = ("def word(output, context):\n    return context['vars']['answer'][2:9]\n\n"
             "def other(output, context):\n    return 'reject'\n\n"
             "def verdict(output, context):\n    return {'pass': True, 'score': 1}\n")


@needs_node
def test_a_script_value_is_called_per_case_and_its_return_is_the_value(tmp_path: Path) -> None:
    """promptfoo's valueFromScript: `value: file://x.js:fn` (or .py/.ts) on a type that is not code runs the
    function with (output, context) and uses what it returns (is-json's schema, contains's text). Returning a
    grading result is for javascript/python assertions: that case is an ERROR."""
    cfg = write(tmp_path, {"promptfooconfig.yaml": SCRIPT_VALUES, "schema.js": SCHEMA_JS, "expect.py": EXPECT_PY})
    rows = sorted(run_suite(cfg), key=lambda r: r.test_index)
    assert [r.status for r in rows] == ["pass", "fail", "error"], [r.reason for r in rows]
    assert "verdict" in rows[1].reason and "only javascript and python assertions" in (rows[2].error or "")


def test_a_missing_script_value_function_is_a_config_error(tmp_path: Path) -> None:
    cfg = write(tmp_path, {"promptfooconfig.yaml": SCRIPT_VALUES.replace("expect.py:word", "expect.py:nope"),
                           "schema.js": SCHEMA_JS, "expect.py": EXPECT_PY})
    with pytest.raises(ConfigError, match="nope") as caught:
        load([str(cfg)])
    assert caught.value.line == 7


# ------------------------------------------------------------------ user providers get the prompt as text
@needs_node
def test_user_providers_receive_a_chat_prompt_as_promptfoos_json_text(tmp_path: Path) -> None:
    """promptfoo hands every provider a string: a chat prompt as JSON.stringify(messages, null, 2). A provider
    that JSON.parses it (a real TypeScript one does) gets the messages back."""
    cfg = write(tmp_path, {
        "prov.js": ("module.exports = class { id() { return 'js'; }\n"
                    "  async callApi(prompt) { return { output: typeof prompt + ':' + JSON.parse(prompt).length\n"
                    "    + ':' + prompt.split('\\n').length }; } };\n"),
        "prov.py": "def call_api(prompt, options, context):\n    return {'output': type(prompt).__name__}\n",
        "promptfooconfig.yaml": ("prompts: ['[{\"role\": \"system\", \"content\": \"s\"}, "
                                 "{\"role\": \"user\", \"content\": \"{{q}}\"}]']\n"
                                 "providers: [file://prov.js, file://prov.py, echo]\ntests:\n  - vars: {q: hi}\n")})
    outputs = sorted(r.output or "" for r in run_suite(cfg))
    assert outputs[:2] == ["[\n  {\n    \"role\": \"system\",\n    \"content\": \"s\"\n  },\n  {\n    \"role\": "
                           "\"user\",\n    \"content\": \"hi\"\n  }\n]", "str"]
    assert outputs[2] == "string:2:10"


# ------------------------------------------------------------------ dotted paths in inline code
def test_inline_code_reads_objects_by_dotted_paths_as_promptfoos_javascript_does(tmp_path: Path) -> None:
    """`output.choices[0].message.role` is valid Python and JavaScript alike: evalrun runs it as Python, where it
    now means what promptfoo's JavaScript means on an object output (a real config's transform over an https
    reply); `context.vars.x` likewise, and a name that is not there is None (JavaScript's undefined)."""
    cfg = write(tmp_path, {"promptfooconfig.yaml": """\
prompts: ['{"choices": [{"message": {"role": "assistant", "content": "{{who}}"}}]}']
providers: [echo]
tests:
  - vars: {who: Ann}
    options: {transform: json.loads(output)}
    assert:
      - {type: equals, value: assistant, transform: "output.choices[0].message.role"}
      - {type: python, value: "output.choices[0].message.content == context.vars.who"}
      - {type: python, value: "output.choices[0].nothing is None and [c.message.role for c in output.choices] == ['assistant']"}
      - {type: python, value: "output['choices'][0]['message']['role'] == 'assistant'"}
"""})
    [row] = run_suite(cfg)
    assert row.status == "pass", row.reason


def test_a_python_file_function_gets_plain_mappings(tmp_path: Path) -> None:
    cfg = write(tmp_path, {"check.py": "def get_assert(output, context):\n    return type(context) is dict\n",
                           "promptfooconfig.yaml": "prompts: [hi]\nproviders: [echo]\ntests:\n"
                                                   "  - assert: [{type: python, value: file://check.py}]\n"})
    [row] = run_suite(cfg)
    assert row.status == "pass", row.reason


# ------------------------------------------------------------------ rubricPrompt as chat messages
def test_a_rubric_prompt_of_chat_messages_is_sent_as_those_messages(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    """promptfoo's example eval-custom-grading-prompt: `rubricPrompt` as [{role, content}] messages, each content
    a template (the test's vars, `output`); the grader receives exactly those messages, whatever quotes the
    output holds."""
    import json

    fake_openai.default = lambda body: {"content": json.dumps({"pass": True, "score": 1, "reason": "ok"})}
    cfg = write(tmp_path, {"promptfooconfig.yaml": f"""\
prompts: ['He said "hi" about {{{{topic}}}}']
providers: [echo]
defaultTest:
  options:
    provider: {{id: openai:chat:judge, config: {{apiBaseUrl: "{fake_openai.url}"}}}}
    rubricPrompt:
      - role: system
        content: 'Did the output mention {{{{x}}}}? Answer as JSON.'
      - role: user
        content: 'Output: {{{{ output }}}}'
tests:
  - vars: {{topic: rates, x: the Federal Reserve}}
    assert: [{{type: llm-rubric, threshold: 0}}]
"""})
    [row] = run_suite(cfg)
    assert row.status == "pass", row.error
    sent = fake_openai.requests[0]["messages"]
    assert sent[0] == {"role": "system", "content": "Did the output mention the Federal Reserve? Answer as JSON."}
    assert sent[1]["role"] == "user" and sent[1]["content"].startswith("Output: ")
    assert 'He said "hi" about rates' in sent[1]["content"]  # fenced as untrusted text (docs/metrics.md)


def test_a_chat_rubric_prompt_message_without_content_is_a_config_error(tmp_path: Path) -> None:
    cfg = write(tmp_path, {"promptfooconfig.yaml": """\
prompts: [hi]
providers: [echo]
tests:
  - assert:
      - type: llm-rubric
        value: polite
        provider: openai:gpt-4o-mini
        rubricPrompt: [{role: system}]
"""})
    with pytest.raises(ConfigError, match="content") as caught:
        load([str(cfg)])
    assert caught.value.line == 8
