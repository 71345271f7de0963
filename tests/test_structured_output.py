"""Structured output (promptfoo 0.121.20): with `response_format: {type: json_schema}` the reply reaches
transforms and javascript/python assertions as the parsed object; other assertions, the results and the report
see it as compact JSON text; a cached reply reads the same."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from evalrun.cli import main
from evalrun.providers.litellm_ import parses_json
from tests.fakeserver import FakeOpenAI

needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="node not installed")

SCHEMA = """\
      response_format:
        type: json_schema
        json_schema:
          name: sentiment
          strict: true
          schema:
            type: object
            properties: {sentiment: {type: string}, score: {type: number}}
            required: [sentiment, score]
"""


def _reply(body: dict[str, Any]) -> dict[str, Any]:
    text = body["messages"][-1]["content"]
    mood = "positive" if "love" in text else "negative"
    return {"content": json.dumps({"sentiment": mood, "score": 0.9}, indent=2)}


def _suite(tmp_path: Path, url: str, config: str, asserts: str) -> Path:
    cfg = tmp_path / "promptfooconfig.yaml"
    cfg.write_text(f"""\
prompts: ['Classify: {{{{text}}}}']
providers:
  - id: openai:chat:gpt-4o-mini
    config:
      apiBaseUrl: {url}
      apiKey: sk-test
{config}
tests:
  - vars: {{text: I love it, sentiment: positive}}
  - vars: {{text: I hate it, sentiment: negative}}
  - vars: {{text: I hate it, sentiment: positive}}
defaultTest:
  assert:
{asserts}""")
    return cfg


def _run(cfg: Path, *extra: str) -> list[dict[str, Any]]:
    out = cfg.parent / "out.json"
    main(["eval", str(cfg), "-o", str(out), "--no-progress-bar", *extra])
    return sorted(json.loads(out.read_text())["results"], key=lambda r: r["test_index"])


@needs_node
def test_json_schema_output_reaches_code_assertions_as_an_object(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("EVALRUN_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "check.py").write_text(
        "def get_assert(output, context):\n"
        "    return isinstance(output, dict) and output['sentiment'] == context['vars']['sentiment']\n")
    with FakeOpenAI(default=_reply) as server:
        cfg = _suite(tmp_path, server.url, SCHEMA, """\
    - type: javascript
      value: output.sentiment === context.vars.sentiment && typeof output.score === 'number'
    - type: python
      value: file://check.py
    - type: is-json
    - type: contains
      value: '"score":0.9'
    - type: javascript
      value: context.providerResponse.output.sentiment.length > 0
""")
        first = _run(cfg)
        assert [r["pass"] for r in first] == [True, True, False], [r["reason"] for r in first]
        assert first[0]["output"] == '{"sentiment":"positive","score":0.9}'  # compact, as JSON.stringify
        assert [a["pass"] for a in first[2]["assertions"]] == [False, False, True, True, True]
        n = len(server.requests)
        again = _run(cfg)  # from the cache: the stored reply is parsed again
        assert len(server.requests) == n and all(r["cached"] for r in again)
        assert [(r["pass"], r["output"]) for r in again] == [(r["pass"], r["output"]) for r in first]
    capsys.readouterr()


@needs_node
def test_a_transform_gets_the_object_and_a_reply_that_is_not_json_stays_text(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    with FakeOpenAI(default=_reply) as server:
        server.script({"content": "not JSON at all"})
        cfg = _suite(tmp_path, server.url, SCHEMA, """\
    - type: equals
      value: '{{sentiment}}'
      transform: output.sentiment.toLowerCase()
""")
        rows = _run(cfg, "--no-cache", "-j", "1")
    assert rows[0]["status"] == "error" and "toLowerCase" in rows[0]["error"]  # a string has no .sentiment
    assert [r["pass"] for r in rows[1:]] == [True, False]
    capsys.readouterr()


@needs_node
def test_json_object_on_openai_stays_text_as_in_promptfoo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    with FakeOpenAI(default=_reply) as server:
        cfg = _suite(tmp_path, server.url, "      response_format: {type: json_object}\n", """\
    - type: javascript
      value: typeof output === 'string' && JSON.parse(output).sentiment === context.vars.sentiment
""")
        rows = _run(cfg, "--no-cache")
    assert [r["pass"] for r in rows] == [True, True, False]
    assert rows[0]["output"].startswith('{\n  "sentiment"')  # the reply as sent
    capsys.readouterr()


@pytest.mark.parametrize(("model", "params", "expected"), [
    ("openai/gpt-4o", {"response_format": {"type": "json_schema", "json_schema": {}}}, True),
    ("openai/gpt-4o", {"response_format": {"type": "json_object"}}, False),
    ("azure/my-deployment", {"response_format": {"type": "json_object"}}, True),
    ("anthropic/claude-sonnet-4-5", {"output_format": {"type": "json_schema", "schema": {}}}, True),
    ("openai/gpt-4o", {"response_format": {"type": "text"}}, False),
    ("openai/gpt-4o", {}, False),
])
def test_which_calls_promptfoo_parses(model: str, params: dict[str, Any], expected: bool) -> None:
    assert parses_json(model, params) is expected


def test_prompt_config_response_format_counts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """A prompt's `config.response_format` (promptfoo's structured-outputs example) merges over the provider's."""
    monkeypatch.chdir(tmp_path)
    with FakeOpenAI(default=_reply) as server:
        cfg = tmp_path / "c.yaml"
        cfg.write_text(f"""\
prompts:
  - label: structured
    raw: 'Classify: {{{{text}}}}'
    config:
{SCHEMA.replace('      ', '      ', 1)}
providers:
  - id: openai:chat:gpt-4o-mini
    config: {{apiBaseUrl: '{server.url}', apiKey: sk-test}}
tests:
  - vars: {{text: I love it}}
    assert:
      - type: is-json
      - type: contains
        value: '"sentiment":"positive"'
""")
        rows = _run(cfg, "--no-cache")
    assert rows[0]["pass"], rows[0]["reason"]
    assert os.environ.get("EVALRUN_STRICT") is None
    capsys.readouterr()
