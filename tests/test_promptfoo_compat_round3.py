"""promptfoo features of issue 11's third round: JavaScript providers, prompt functions, http providers with
JavaScript transformResponse, Nunjucks `===`, objects flowing through transforms, every validate error at once,
env templates in provider ids, promptfoo's default grader, llm-rubric under a custom rubricPrompt."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from evalrun.config import load
from evalrun.errors import ConfigError, ConfigErrors
from tests.fakeserver import FakeOpenAI
from tests.test_promptfoo_compat_features import run_suite, write

needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="node not installed")

PROVIDER_JS = """
class Upper {
  constructor(options) { this.options = options; }
  id() { return this.options.id; }
  async callApi(prompt, context) {
    if (prompt.includes('!ERROR!')) throw new Error('forced: ' + prompt);
    if (prompt.includes('!OBJ!')) return { output: { said: prompt, topic: context.vars.topic } };
    return { output: `${prompt.toUpperCase()} [${this.options.label}|${this.options.config.suffix}]`,
             tokenUsage: { prompt: 3, completion: 2, total: 5 } };
  }
}
module.exports = Upper;
"""


def _validate(cfg: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "evalrun", "validate", str(cfg)], capture_output=True, text=True,
                          check=False, cwd=cfg.parent)


# ------------------------------------------------------------------ file://provider.js
@needs_node
def test_a_javascript_provider_class_runs_in_node_with_promptfoo_semantics(tmp_path: Path) -> None:
    cfg = write(tmp_path, {
        "upper.js": PROVIDER_JS,
        "promptfooconfig.yaml": (
            "prompts: ['say {{topic}}']\nproviders:\n  - id: file://upper.js\n    label: up\n"
            "    config: {suffix: S}\n  - upper.js\n"
            "tests:\n  - vars: {topic: kiwi}\n    assert: [{type: contains, value: SAY KIWI}]\n"
            "  - vars: {topic: '!ERROR!'}\n"
            "  - vars: {topic: '!OBJ!'}\n    assert:\n"
            "      - {type: javascript, value: \"output.topic === '!OBJ!'\"}\n")})
    rows = sorted(run_suite(cfg), key=lambda r: (r.test_index, r.output or ""))
    statuses = [(r.test_index, r.status) for r in rows]
    assert statuses == [(0, "pass"), (0, "pass"), (1, "error"), (1, "error"), (2, "pass"), (2, "pass")], \
        [r.reason for r in rows]
    assert any("[up|S]" in (r.output or "") for r in rows)  # label and config reach the constructor
    assert "forced: say !ERROR!" in (rows[2].error or "")


@needs_node
def test_an_es_module_provider_loads(tmp_path: Path) -> None:
    cfg = write(tmp_path, {
        "p.mjs": "export default class { async callApi(p) { return 'esm:' + p; } }\n",
        "promptfooconfig.yaml": "prompts: [hi]\nproviders: [file://p.mjs]\ntests:\n"
                                "  - assert: [{type: equals, value: 'esm:hi'}]\n"})
    assert [r.status for r in run_suite(cfg)] == ["pass"]


@needs_node
@pytest.mark.parametrize("source, fragment", [
    ("module.exports = 42;\n", "does not export a provider class"),
    ("module.exports = class { constructor() { throw new Error('bad key'); } };\n", "bad key"),
    ("module.exports = class {\n", "SyntaxError"),
])
def test_a_broken_javascript_provider_is_a_config_error_at_its_line(tmp_path: Path, source: str,
                                                                     fragment: str) -> None:
    cfg = write(tmp_path, {"p.js": source,
                           "promptfooconfig.yaml": "prompts: [hi]\nproviders:\n  - echo\n  - id: file://p.js\n"})
    done = _validate(cfg)
    assert done.returncode == 2 and "promptfooconfig.yaml:4:" in done.stderr and fragment in done.stderr


def test_a_missing_provider_file_is_a_config_error(tmp_path: Path) -> None:
    cfg = write(tmp_path, {"promptfooconfig.yaml": "prompts: [hi]\nproviders:\n  - file://nope.js\n"})
    with pytest.raises(ConfigError) as e:
        load([str(cfg)])
    assert e.value.line == 3 and "nope.js" in str(e.value)


def test_without_node_a_javascript_provider_is_a_config_error(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = write(tmp_path, {"p.js": PROVIDER_JS, "promptfooconfig.yaml": "prompts: [hi]\nproviders:\n  - p.js\n"})
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    done = subprocess.run([sys.executable, "-m", "evalrun", "validate", str(cfg)], capture_output=True,
                          text=True, check=False, env={"PATH": str(tmp_path / "empty"), "HOME": str(tmp_path)})
    assert done.returncode == 2 and "promptfooconfig.yaml:3:" in done.stderr and "Node.js" in done.stderr


# ------------------------------------------------------------------ prompt functions
@needs_node
def test_prompt_functions_in_javascript_es_modules_and_python(tmp_path: Path) -> None:
    cfg = write(tmp_path, {
        "p.mjs": ("export function chat({ vars, provider }) {\n"
                  "  return [{ role: 'user', content: `Hi ${vars.name} via ${provider.id}` }];\n}\n"
                  "export const text = ({ vars }) => ({ prompt: `Hello ${vars.name}`, config: { t: 0 } });\n"),
        "p.py": "def get_prompt(context):\n    return 'Py ' + context['vars']['name']\n",
        "promptfooconfig.yaml": ("prompts: [file://p.mjs:chat, file://p.mjs:text, file://p.py]\nproviders: [echo]\n"
                                 "tests:\n  - vars: {name: Ann}\n    assert: [{type: icontains, value: ann}]\n")})
    rows = run_suite(cfg)
    assert sorted(r.output or "" for r in rows) == [
        "Hello Ann", "Py Ann", '[\n  {\n    "role": "user",\n    "content": "Hi Ann via echo"\n  }\n]'], \
        [r.reason for r in rows]
    assert all(r.status == "pass" for r in rows)


@needs_node
def test_a_missing_prompt_function_export_is_a_config_error_at_its_line(tmp_path: Path) -> None:
    cfg = write(tmp_path, {"p.js": "module.exports.a = () => 'x';\n",
                           "promptfooconfig.yaml": "providers: [echo]\nprompts:\n  - file://p.js:b\n"})
    with pytest.raises(ConfigError) as e:
        load([str(cfg)])
    assert e.value.line == 3 and "does not export a function" in str(e.value)


# ------------------------------------------------------------------ http providers
@needs_node
def test_https_named_provider_with_config_url_and_javascript_transform_response(tmp_path: Path,
                                                                                monkeypatch: pytest.MonkeyPatch
                                                                                ) -> None:
    with FakeOpenAI(default=lambda body: {"content": "pong " + str(body.get("q"))}) as server:
        monkeypatch.setenv("FAKE_URL", server.url)
        cfg = write(tmp_path, {"promptfooconfig.yaml": (
            "prompts: ['{{q}}']\nproviders:\n"
            "  - id: https:gateway/model-a\n    config:\n      url: '{{ env.FAKE_URL }}/chat/completions'\n"
            "      body: {q: '{{prompt}}'}\n      transformResponse: json.choices[0].message\n"
            "  - id: http\n    config:\n      url: '{{ env.FAKE_URL }}/chat/completions'\n"
            "      body: {q: '{{prompt}}'}\n"
            "      transformResponse: 'JSON.stringify({said: json.choices[0].message.content, n: text.length > 0})'\n"
            "tests:\n  - vars: {q: ping}\n    assert:\n"
            "      - {type: javascript, value: \"(typeof output === 'object' ? output.content"
            " : JSON.parse(output).said) === 'pong ping'\"}\n")})
        rows = run_suite(cfg)
    assert [r.status for r in rows] == ["pass", "pass"], [r.reason for r in rows]


def test_an_http_provider_without_url_is_a_config_error(tmp_path: Path) -> None:
    cfg = write(tmp_path, {"promptfooconfig.yaml": "prompts: [hi]\nproviders:\n  - id: https\n"})
    done = _validate(cfg)
    assert done.returncode == 2 and "promptfooconfig.yaml:3:" in done.stderr and "config.url" in done.stderr


# ------------------------------------------------------------------ Nunjucks ===
def test_strict_equality_operators_render_like_nunjucks(tmp_path: Path) -> None:
    cfg = write(tmp_path, {"promptfooconfig.yaml": (
        "prompts: ['{% if mode === \"short\" %}S{% else %}L{% endif %}{{ n !== 2 }}']\nproviders: [echo]\n"
        "tests:\n  - vars: {mode: short, n: 2}\n    assert: [{type: equals, value: Sfalse}]\n"
        "  - vars: {mode: long, n: 3}\n    assert: [{type: equals, value: Ltrue}]\n")})
    assert [r.status for r in run_suite(cfg)] == ["pass", "pass"]


def test_a_dangling_strict_equality_is_a_syntax_error_at_the_prompt_line(tmp_path: Path) -> None:
    cfg = write(tmp_path, {"promptfooconfig.yaml": "providers: [echo]\nprompts:\n  - '{{ a === }}'\n"
                                                    "tests: [{vars: {a: 1}}]\n"})
    with pytest.raises(ConfigError) as e:
        load([str(cfg)])
    assert e.value.line == 3 and "syntax error" in str(e.value)


# ------------------------------------------------------------------ validate reports every error
def test_validate_reports_every_error_at_once(tmp_path: Path) -> None:
    tests = "".join(f"  - vars: {{x: {i}}}\n    asert: [{{type: contains, value: a}}]\n" for i in range(6))
    cfg = write(tmp_path, {"promptfooconfig.yaml": f"prompts: ['{{{{x}}}}']\nproviders: [echo]\ntests:\n{tests}"})
    with pytest.raises(ConfigErrors) as e:
        load([str(cfg)])
    assert [err.line for err in e.value.errors] == [5, 7, 9, 11, 13, 15]
    done = _validate(cfg)
    assert done.returncode == 2 and done.stderr.count("unknown key 'asert'") == 1  # one mistake, shown once
    assert done.stderr.count("did you mean `assert`?") == 1 and "6 errors" in done.stderr
    assert "and 5 more tests: promptfooconfig.yaml:7, promptfooconfig.yaml:9, " in done.stderr


def test_validate_reports_every_test_with_an_undefined_variable(tmp_path: Path) -> None:
    cfg = write(tmp_path, {"promptfooconfig.yaml": (
        "prompts: ['Hi {{name}}']\nproviders: [echo]\ntests:\n  - vars: {nmae: 1}\n  - vars: {name: 2}\n"
        "  - vars: {nmae: 3}\n")})
    with pytest.raises(ConfigErrors) as e:  # each a likely typo of the var it defines
        load([str(cfg)])
    assert len(e.value.errors) == 2 and all("'name'" in err.message for err in e.value.errors)
    assert "used by tests[0] at " in str(e.value) and "promptfooconfig.yaml:4\n" in str(e.value)
    assert "and 1 more test: tests[2] at " in str(e.value) and str(e.value).endswith("promptfooconfig.yaml:6\n2 errors")


def test_several_unknown_keys_of_one_mapping_are_each_reported(tmp_path: Path) -> None:
    cfg = write(tmp_path, {"promptfooconfig.yaml": (
        "prompts: [hi]\nproviders: [echo]\ntests:\n  - assert:\n      - type: contains\n        value: h\n"
        "        treshold: 1\n        wieght: 2\n")})
    with pytest.raises(ConfigErrors) as e:
        load([str(cfg)])
    assert [(err.line, err.hint) for err in e.value.errors] == [(7, "did you mean `threshold`?"),
                                                               (8, "did you mean `weight`?")]


# ------------------------------------------------------------------ env in provider ids, responses ids
def test_env_templates_in_provider_and_grader_ids(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_MODEL", "gpt-4o-mini")
    cfg = write(tmp_path, {"promptfooconfig.yaml": (
        "prompts: [hi]\nproviders: ['openai:chat:{{ env.MY_MODEL }}']\n"
        "defaultTest:\n  options:\n    provider: {id: 'azure:chat:{{ env.MY_MODEL }}'}\n"
        "tests:\n  - assert: [{type: llm-rubric, value: polite}]\n")})
    suite = load([str(cfg)])
    assert suite.providers[0].id == "openai:chat:gpt-4o-mini"
    monkeypatch.delenv("MY_MODEL")
    with pytest.raises(ConfigError) as e:
        load([str(cfg)])
    assert e.value.line == 2 and "MY_MODEL" in str(e.value)


def test_openai_responses_ids_use_litellms_responses_bridge() -> None:
    from evalrun.providers.http_ import DirectOpenAI
    from evalrun.providers.ids import to_litellm_model

    assert to_litellm_model("openai:responses:gpt-5.4") == "openai/responses/gpt-5.4"
    assert to_litellm_model("azure:responses:dep") == "azure/responses/dep"
    assert not DirectOpenAI.accepts("openai/responses/gpt-5.4", {"api_base": "http://x/v1"})
    with pytest.raises(ConfigError):
        to_litellm_model("openai:embedding:text-embedding-3-small")


def test_ollama_ids_follow_ollama_base_url() -> None:
    from evalrun.providers.ids import default_params

    assert default_params("ollama:chat:llama3", {"OLLAMA_BASE_URL": "http://h:1"}) == {"api_base": "http://h:1"}
    assert default_params("ollama:chat:llama3", {}) == {}


# ------------------------------------------------------------------ graders as promptfoo picks them
def _graded_cfg(tmp_path: Path, rubric: str = "    assert: [{type: llm-rubric, value: polite}]\n") -> Path:
    return write(tmp_path, {"promptfooconfig.yaml": f"prompts: [hi]\nproviders: [echo]\ntests:\n  - vars: {{}}\n{rubric}"})


def test_llm_rubric_without_a_grader_uses_promptfoos_default_when_its_key_is_set(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from evalrun.grading.select import GraderResolver

    cfg = _graded_cfg(tmp_path)
    monkeypatch.delenv("EVALRUN_GRADER", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    suite = load([str(cfg)])
    spec, test = suite.tests[0].asserts[0], suite.tests[0]
    chosen, origin = GraderResolver(suite, None, None).spec_for(spec, test)
    assert isinstance(chosen, dict) and chosen["id"] == "openai:gpt-5.5-2026-04-23"
    assert chosen["config"] == {"drop_params": True} and "OPENAI_API_KEY is set" in chosen["label"]
    assert origin == "no grader named"
    monkeypatch.delenv("OPENAI_API_KEY")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    chosen = GraderResolver(suite, None, None).spec_for(spec, test)[0]
    assert isinstance(chosen, dict) and chosen["id"] == "anthropic:messages:claude-sonnet-4-6"


def test_llm_rubric_with_no_grader_and_no_key_is_one_config_error_before_any_call(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for k in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "EVALRUN_GRADER"):
        monkeypatch.delenv(k, raising=False)
    cfg = _graded_cfg(tmp_path)
    done = subprocess.run([sys.executable, "-m", "evalrun", "eval", str(cfg), "--no-cache", "--no-table",
                           "--no-progress-bar", "--results-file", str(tmp_path / "r.jsonl")], capture_output=True,
                          text=True, check=False, env={k: v for k, v in __import__("os").environ.items()
                                                       if k not in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY")})
    assert done.returncode == 2 and "promptfooconfig.yaml:5:" in done.stderr and "llm-rubric" in done.stderr
    assert not (tmp_path / "r.jsonl").exists() or not (tmp_path / "r.jsonl").read_text().strip()


def test_llm_rubric_takes_no_value_only_under_a_custom_rubric_prompt(tmp_path: Path) -> None:
    ok = _graded_cfg(tmp_path, "    options:\n      rubricPrompt: 'Grade {{output}}'\n"
                               "    assert: [{type: llm-rubric}]\n")
    assert load([str(ok)]).tests[0].asserts[0].type == "llm-rubric"
    bad = _graded_cfg(tmp_path / "b", "    assert:\n      - type: llm-rubric\n")
    with pytest.raises(ConfigError) as e:
        load([str(bad)])
    assert e.value.line == 6 and "value is required" in str(e.value) and "rubricPrompt" in (e.value.hint or "")


# ------------------------------------------------------------------ is-valid-openai-function-call
@pytest.mark.parametrize("output, passed", [
    ('{"name": "get_weather", "arguments": "{\\"location\\": \\"Oslo\\"}"}', True),
    ('{"name": "get_weather", "arguments": "{\\"unit\\": \\"c\\"}"}', False),  # location is required
    ('{"name": "other", "arguments": "{}"}', False),
    ("It is sunny.", False),
])
def test_is_valid_openai_function_call(tmp_path: Path, output: str, passed: bool) -> None:
    import json

    (tmp_path / "f.yaml").write_text(
        "- name: get_weather\n  parameters:\n    type: object\n    properties: {location: {type: string}}\n"
        "    required: [location]\n")
    cfg = write(tmp_path, {
        "p.py": "def call_api(prompt, options, context):\n    return context['vars']['out']\n",
        "promptfooconfig.yaml": (
            "prompts: [hi]\nproviders:\n  - id: file://p.py\n    config: {functions: file://f.yaml}\n"
            f"tests:\n  - vars: {{out: {json.dumps(output)}}}\n"
            "    assert: [{type: is-valid-openai-function-call}]\n")})
    rows = run_suite(cfg)
    assert [r.status for r in rows] == ["pass" if passed else "fail"], rows[0].reason


# ------------------------------------------------------------------ tools through litellm
def test_a_provider_with_tools_runs_through_litellm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """litellm's MCP-gateway path for `tools` needs the optional `mcp` package; evalrun skips it."""
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    with FakeOpenAI(default=lambda body: {"content": f"tools={len(body.get('tools') or [])}"}) as server:
        cfg = write(tmp_path, {"promptfooconfig.yaml": (
            "prompts: [hi]\nproviders:\n  - id: openai:chat:gpt-4o-mini\n"
            f"    config:\n      apiBaseUrl: {server.url}\n      apiKey: sk-test\n"
            "      tools: [{type: function, function: {name: f, parameters: {type: object}}}]\n"
            "tests:\n  - assert: [{type: equals, value: tools=1}]\n")})
        rows = run_suite(cfg)
    assert [r.status for r in rows] == ["pass"], [r.reason for r in rows]
