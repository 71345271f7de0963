"""promptfoo's `classifier` end to end: a Python classification provider (offline), the Hugging Face inference
protocol against the fake server on 127.0.0.1, and validate's refusal without a classifier."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from evalrun.cli import main
from tests.fakeserver import FakeOpenAI

CLASSIFY = textwrap.dedent("""\
    def call_classification_api(prompt, options):
        if "fail" in prompt:
            return {"error": "model overloaded"}
        if "bad" in prompt:
            return {"classification": {"NEGATIVE": 0.9, "POSITIVE": 0.1}}
        return {"classification": {"POSITIVE": 0.8, "NEGATIVE": 0.2}}

    async def scored(prompt, options):
        return {"classification": {"toxic": 0.75 * options["config"]["weight"]}}

    def broken(prompt, options):
        return ["POSITIVE"]
    """)


def _suite(tmp_path: Path, answer: str, asserts: str, extra: str = "") -> Path:
    (tmp_path / "classify.py").write_text(CLASSIFY)
    suite = tmp_path / "suite.yaml"
    suite.write_text(textwrap.dedent("""\
        prompts: ["{{answer}}"]
        providers: [echo]
        """) + extra + textwrap.dedent(f"""\
        tests:
          - vars: {{answer: "{answer}"}}
            assert:
        """) + textwrap.indent(textwrap.dedent(asserts), "      "))
    return suite


def _run(tmp_path: Path, answer: str, asserts: str, capsys: pytest.CaptureFixture[str],
         extra: str = "") -> list[dict[str, Any]]:
    suite = _suite(tmp_path, answer, asserts, extra)
    out = tmp_path / "out.json"
    main(["eval", str(suite), "--no-cache", "-o", str(out)])
    capsys.readouterr()
    return list(json.loads(out.read_text())["results"][0]["assertions"])


def test_python_classifier_pass_fail_not_and_max(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = _run(tmp_path, "a lovely day", """\
        - type: classifier
          provider: file://classify.py
          value: POSITIVE
          threshold: 0.7
        - type: classifier
          provider: file://classify.py
          value: POSITIVE
          threshold: 0.9
        - type: not-classifier
          provider: file://classify.py
          value: NEGATIVE
          threshold: 0.5
        - type: classifier
          provider: file://classify.py
          threshold: 0.8
        - type: classifier
          provider: file://classify.py
          value: NEUTRAL
          threshold: 0.1
        - type: classifier
          provider: file://classify.py
          value: POSITIVE
        """, capsys)
    assert a[0]["pass"] and a[0]["score"] == 0.8 and a[0]["reason"] == "Classification POSITIVE has score 0.80 >= 0.7"
    assert a[0]["details"]["classification"] == {"POSITIVE": 0.8, "NEGATIVE": 0.2}
    assert not a[1]["pass"] and a[1]["reason"] == "Classification POSITIVE has score 0.80 < 0.9"
    assert a[2]["pass"] and a[2]["score"] == pytest.approx(0.8)  # not-: 0.2 < 0.5, score 1 - 0.2
    assert a[3]["pass"] and a[3]["reason"] == "Maximum classification score 0.80 >= 0.8"
    assert not a[4]["pass"] and a[4]["score"] == 0.0 and "no class 'NEUTRAL'" in a[4]["reason"]
    assert not a[5]["pass"] and "< 1" in a[5]["reason"]  # promptfoo's default threshold is 1


def test_classifier_from_test_options_and_async_function(tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    extra = textwrap.dedent("""\
        defaultTest:
          options:
            provider:
              text: openai:gpt-4o-mini
              classification: {id: "file://classify.py:scored", config: {weight: 1.0}}
        """)
    a = _run(tmp_path, "you idiot", "- type: classifier\n  value: toxic\n  threshold: 0.5\n", capsys, extra)
    assert a[0]["pass"] and a[0]["score"] == 0.75 and a[0]["details"]["classifier"] == "file://classify.py:scored"


def test_classifier_errors_are_errors_never_passes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = _run(tmp_path, "fail here", """\
        - type: not-classifier
          provider: file://classify.py
          value: POSITIVE
        - type: classifier
          provider: file://classify.py:broken
          value: POSITIVE
        """, capsys)
    assert a[0]["error"] and "model overloaded" in a[0]["error"] and not a[0]["pass"]
    assert a[1]["error"] and "must return {'classification'" in a[1]["error"] and not a[1]["pass"]


def _hf(fake: FakeOpenAI, reply: Any) -> str:
    fake.default = lambda body: reply
    return f"{{apiEndpoint: '{fake.url}/models/sst2', apiKey: hf-secret}}"


def test_huggingface_protocol_one_request_per_evaluation(tmp_path: Path, fake_openai: FakeOpenAI,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    config = _hf(fake_openai, {"raw": json.dumps([[{"label": "POSITIVE", "score": 0.98},
                                                   {"label": "NEGATIVE", "score": 0.02}]])})
    a = _run(tmp_path, "great", f"""\
        - type: classifier
          provider: {{id: "huggingface:text-classification:sst2", config: {config}}}
          value: POSITIVE
          threshold: 0.5
        """, capsys)
    assert a[0]["pass"] and a[0]["score"] == 0.98
    assert fake_openai.requests == [{"inputs": "great", "parameters": {}}]
    assert fake_openai.headers[0]["authorization"] == "Bearer hf-secret"
    # the flat list newer endpoints return, and token classification (highest span per entity group)
    config = _hf(fake_openai, {"raw": json.dumps([{"label": "NEGATIVE", "score": 0.6}])})
    a = _run(tmp_path, "meh", f"""\
        - type: classifier
          provider: {{id: "huggingface:text-classification:sst2", config: {config}}}
          value: NEGATIVE
          threshold: 0.5
        """, capsys)
    assert a[0]["pass"] and a[0]["score"] == 0.6
    config = _hf(fake_openai, {"raw": json.dumps([{"entity_group": "EMAIL", "score": 0.4},
                                                  {"entity_group": "EMAIL", "score": 0.97}])})
    a = _run(tmp_path, "mail me at a@b.c", f"""\
        - type: not-classifier
          provider: {{id: "huggingface:token-classification:pii", config: {config}}}
          value: EMAIL
          threshold: 0.9
        """, capsys)
    assert not a[0]["pass"] and a[0]["details"]["classification"] == {"EMAIL": 0.97}


@pytest.mark.parametrize("reply", [{"raw": json.dumps({"error": "Model is loading"})}, {"raw": "[[1, 2]]"},
                                   {"status": 503}])
def test_huggingface_failures_are_errors(tmp_path: Path, fake_openai: FakeOpenAI,
                                         capsys: pytest.CaptureFixture[str], reply: dict[str, Any]) -> None:
    config = _hf(fake_openai, reply)
    a = _run(tmp_path, "x", f"""\
        - type: not-classifier
          provider: {{id: "huggingface:text-classification:sst2", config: {config}}}
          value: POSITIVE
        """, capsys)
    assert a[0]["error"] and not a[0]["pass"]


def test_huggingface_unreachable_endpoint_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    a = _run(tmp_path, "x", f"""\
        - type: not-classifier
          provider: {{id: "huggingface:text-classification:sst2", config: {{apiEndpoint: 'http://127.0.0.1:{port}/m'}}}}
          value: POSITIVE
        """, capsys)
    assert a[0]["error"] and "cannot reach http://127.0.0.1:" in a[0]["error"] and not a[0]["pass"]


def _validate(tmp_path: Path, asserts: str, capsys: pytest.CaptureFixture[str], extra: str = "") -> tuple[int, str]:
    code = main(["validate", str(_suite(tmp_path, "x", asserts, extra))])
    return code, capsys.readouterr().err


def test_validate_refuses_a_classifier_without_a_provider(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EVALRUN_CLASSIFIER", raising=False)
    extra = "defaultTest:\n  options:\n    provider: openai:gpt-4o-mini\n"  # a text grader is no classifier
    code, err = _validate(tmp_path, "- type: classifier\n  value: POSITIVE\n", capsys, extra)
    assert code == 2 and "needs a classification provider and none is configured" in err
    assert "suite.yaml:9" in err and "tests[0].assert[0].provider" in err and "huggingface:text-classification" in err
    monkeypatch.setenv("EVALRUN_CLASSIFIER", f"file://{tmp_path / 'classify.py'}")  # relative to the cwd
    assert _validate(tmp_path, "- type: classifier\n  value: POSITIVE\n", capsys, extra)[0] == 0


@pytest.mark.parametrize(("asserts", "message"), [
    ("- type: classifier\n  provider: openai:gpt-4o-mini\n", "'openai:gpt-4o-mini' is not a classification provider"),
    ("- type: classifier\n  provider: file://classify.py:nope\n", "has no function 'nope'"),
    ("- type: classifier\n  provider: file://missing.py\n", "python file not found"),
    ("- type: classifier\n  provider: file://classify.py\n  value: [a, b]\n", "must have a string value"),
    ("- type: classifier\n  provider: {id: 'huggingface:text-classification:m', config: {apiEndpont: x}}\n",
     "unknown config key(s) for huggingface:text-classification:m: apiEndpont"),
    ("- type: classifier\n  provider: file://classify.py\n  config: {labels: [a]}\n", "unknown config key 'labels'"),
])
def test_bad_arguments(tmp_path: Path, capsys: pytest.CaptureFixture[str], asserts: str, message: str) -> None:
    code, err = _validate(tmp_path, asserts, capsys)
    assert code == 2 and message in err and "suite.yaml:" in err and "Traceback" not in err
