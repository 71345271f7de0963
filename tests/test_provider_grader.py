"""A grader that is any evalrun provider (grading/select.py, grading/llm.py): http and python graders end to end, the
prompt a provider-grader receives, a bad grader id at FILE:LINE before any call, a failing grader is an ERROR."""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path
from typing import Any

import pytest

from evalrun.api import evaluate
from evalrun.errors import ConfigError
from evalrun.grading.llm import prompt_text
from evalrun.run.store import read_records
from tests.fakeserver import FakeOpenAI

HINT = "Your reply must be one JSON object matching this JSON schema exactly (array lengths included):\n"


def reply_for(prompt: str) -> str:
    """A grader that answers whatever the prompt's reply schema asks for (every claim supported, rubric passed)."""
    messages = json.loads(prompt)
    last = messages[-1]["content"]
    schema = json.loads(last.rsplit(HINT, 1)[1].strip().splitlines()[0])
    props = schema["properties"]
    if "claims" in props:
        return json.dumps({"claims": ["Paris is the capital of France."]})
    if "verdicts" in props:
        n = props["verdicts"]["minItems"]
        return json.dumps({"verdicts": [{"verdict": "supported", "reason": "stated", "evidence": [0]}] * n})
    if "pass" in props:
        return json.dumps({"reason": "meets the rubric", "pass": True, "score": 1.0})
    raise AssertionError(f"unexpected schema {schema}")


def grader_prompt(body: dict[str, Any]) -> str:
    return str(body["messages"][0]["content"])


def write(tmp_path: Path, text: str, name: str = "c.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def run(path: Path, tmp_path: Path) -> list[dict[str, Any]]:
    out = tmp_path / "r.jsonl"
    evaluate(str(path), results_file=out, use_cache=False)
    return [rec for _, rec in read_records(out)]


HTTP_GRADER = """\
    prompts: ["{{{{ q }}}}"]
    providers: [echo]
    defaultTest:
      options:
        provider:
          id: https:my-judge
          config:
            url: {url}/chat/completions
            body:
              model: judge
              messages: [{{role: user, content: "{{{{ prompt }}}}"}}]
            transformResponse: json.choices[0].message.content
    tests:
      - vars: {{q: "Paris is the capital of France.", context: "Paris is the capital and largest city of France."}}
        assert:
          - type: context-faithfulness
            threshold: 1
          - type: llm-rubric
            value: names a capital city
"""


def test_http_grader_grades_faithfulness_and_rubric(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    fake_openai.default = lambda body: {"content": reply_for(grader_prompt(body))}
    [rec] = run(write(tmp_path, HTTP_GRADER.format(url=fake_openai.url)), tmp_path)
    assert rec["status"] == "pass", rec
    # faithfulness: extract + verify; llm-rubric: one judge call; every one through the http grader
    assert len(fake_openai.requests) == 3
    assert {r["model"] for r in fake_openai.requests} == {"judge"}
    prompts = [json.loads(grader_prompt(r)) for r in fake_openai.requests]
    assert all([m["role"] for m in p] == ["system", "user"] for p in prompts)
    assert any("names a capital city" in p[1]["content"] for p in prompts)


def test_http_grader_invalid_reply_is_repaired_once(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    config = HTTP_GRADER.format(url=fake_openai.url).replace(
        "          - type: context-faithfulness\n            threshold: 1\n", "")
    fake_openai.script({"content": "I think it passes."})
    fake_openai.default = lambda body: {"content": reply_for(grader_prompt(body))}
    [rec] = run(write(tmp_path, config), tmp_path)
    assert rec["status"] == "pass", rec
    assert len(fake_openai.requests) == 2  # the reply, then one repair call carrying it and the error
    repair = json.loads(grader_prompt(fake_openai.requests[1]))
    assert [m["role"] for m in repair] == ["system", "user", "assistant", "user"]
    assert repair[2]["content"] == "I think it passes."
    assert "could not be used" in repair[3]["content"]


def test_http_grader_still_invalid_after_repair_is_an_error(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    fake_openai.default = lambda body: {"content": "no JSON here"}
    [rec] = run(write(tmp_path, HTTP_GRADER.format(url=fake_openai.url)), tmp_path)
    assert rec["status"] == "error"
    assert "after one repair attempt" in json.dumps(rec)


def test_failing_grader_provider_makes_the_case_an_error(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    fake_openai.default = lambda body: {"status": 400, "body": {"error": {"message": "bad request"}}}
    [rec] = run(write(tmp_path, HTTP_GRADER.format(url=fake_openai.url)), tmp_path)
    assert rec["status"] == "error"
    assert "400" in json.dumps(rec)


PY_GRADER = """\
    import json

    def call_api(prompt, options, context):
        if options["config"].get("fail"):
            return {"error": "grader is down"}
        messages = json.loads(prompt)
        assert messages[-1]["role"] == "user"
        passed = "polite" in messages[-1]["content"]
        return json.dumps({"reason": "checked", "pass": passed, "score": 1.0 if passed else 0.0})
"""


def py_config(tmp_path: Path, fail: bool = False) -> Path:
    (tmp_path / "grader.py").write_text(textwrap.dedent(PY_GRADER), encoding="utf-8")
    return write(tmp_path, f"""\
        prompts: ["{{{{ q }}}}"]
        providers: [echo]
        tests:
          - vars: {{q: hello}}
            assert:
              - type: llm-rubric
                value: is polite
                provider: {{id: file://grader.py, config: {{fail: {str(fail).lower()}}}}}
          - vars: {{q: go away}}
            assert:
              - type: llm-rubric
                value: is rude
                provider: {{id: file://grader.py, config: {{fail: {str(fail).lower()}}}}}
        """)


def test_python_provider_grader(tmp_path: Path) -> None:
    records = run(py_config(tmp_path), tmp_path)
    assert sorted(r["status"] for r in records) == ["fail", "pass"]


def test_python_provider_grader_error_is_an_error(tmp_path: Path) -> None:
    records = run(py_config(tmp_path, fail=True), tmp_path)
    assert [r["status"] for r in records] == ["error", "error"]
    assert "grader is down" in json.dumps(records[0])


def test_unknown_grader_id_is_a_config_error_before_any_call(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    path = write(tmp_path, f"""\
        prompts: ["{{{{ q }}}}"]
        providers: [{{id: "openai:chat:m", config: {{apiBaseUrl: "{fake_openai.url}", apiKey: k}}}}]
        tests:
          - vars: {{q: hi}}
            assert:
              - type: llm-rubric
                value: ok
                provider: nosuch:judge
        """)
    with pytest.raises(ConfigError) as err:
        run(path, tmp_path)
    assert err.value.file and err.value.file.endswith("c.yaml") and err.value.line == 6
    assert "unknown provider prefix 'nosuch'" in err.value.message
    assert fake_openai.requests == []


def test_http_grader_without_url_is_a_config_error_before_any_call(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    path = write(tmp_path, HTTP_GRADER.format(url=fake_openai.url).replace(
        "            url: " + fake_openai.url + "/chat/completions\n", ""))
    with pytest.raises(ConfigError) as err:
        run(path, tmp_path)
    assert err.value.file and err.value.file.endswith("c.yaml") and err.value.line
    assert "url" in err.value.message
    assert fake_openai.requests == []


def test_prompt_text_is_promptfoos_form() -> None:
    assert prompt_text([{"role": "user", "content": "grade this"}]) == "grade this"
    msgs = [{"role": "system", "content": "s"}, {"role": "user", "content": "é"}]
    assert prompt_text(msgs) == '[{"role":"system","content":"s"},{"role":"user","content":"é"}]'


@pytest.mark.parametrize("command", ["validate", "eval"])
def test_bad_provider_grader_is_reported_at_its_line_by_the_cli(command: str, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    from evalrun.cli import main

    path = write(tmp_path, """\
        prompts: ["{{ q }}"]
        providers: [echo]
        tests:
          - vars: {q: hi}
            assert:
              - type: llm-rubric
                value: ok
                provider: {id: "https:judge", config: {body: {p: "{{ prompt }}"}}}
        """)
    assert main([command, str(path), *(["--no-history"] if command == "eval" else [])]) == 2
    err = capsys.readouterr().err
    assert f"{path}:6: tests[0].assert[0].provider: " in err and "needs `config.url`" in err
    assert "Traceback" not in err


@pytest.mark.skipif(shutil.which("node") is None, reason="node not installed")
def test_javascript_provider_grader(tmp_path: Path) -> None:
    (tmp_path / "judge.js").write_text(textwrap.dedent("""\
        module.exports = class {
          id() { return 'judge'; }
          async callApi(prompt) {
            const messages = JSON.parse(prompt);
            const ok = messages[messages.length - 1].content.includes('polite');
            return {output: JSON.stringify({reason: 'js', pass: ok, score: ok ? 1 : 0})};
          }
        };
        """), encoding="utf-8")
    path = write(tmp_path, """\
        prompts: ["{{ q }}"]
        providers: [echo]
        defaultTest:
          options: {provider: file://judge.js}
        tests:
          - {vars: {q: hi}, assert: [{type: llm-rubric, value: is polite}]}
          - {vars: {q: hi}, assert: [{type: llm-rubric, value: is rude}]}
        """)
    assert [r["status"] for r in sorted(run(path, tmp_path), key=lambda r: r["test_index"])] == ["pass", "fail"]
