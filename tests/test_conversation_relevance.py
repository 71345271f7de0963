"""conversation-relevance through the fake OpenAI-compatible grader: one call per window, the score is the
share of relevant windows, windowSize, threshold, not-, a failing grader is an ERROR, bad arguments."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from evalrun.cli import main
from tests.fakeserver import FakeOpenAI
from tests.test_assertions_helpers import bad

CONV = [{"input": "What is the capital of France?", "output": "Paris."},
        {"input": "And its population?", "output": "About 2.1 million in the city proper."},
        {"input": "Best season to visit?", "output": "I like turtles."}]


def _run(tmp_path: Path, fake: FakeOpenAI, asserts: str, capsys: pytest.CaptureFixture[str],
         vars: str = "{q: hi}") -> dict[str, Any]:
    (tmp_path / "suite.yaml").write_text(textwrap.dedent(f"""\
        prompts: ["{{{{q}}}}"]
        providers: [echo]
        grader: {{id: 'openai:chat:fake-model', config: {{apiBaseUrl: '{fake.url}', apiKey: sk-x}}}}
        tests:
          - vars: {vars}
            assert: {asserts}
        """))
    main(["eval", str(tmp_path / "suite.yaml"), "--no-cache", "-o", str(tmp_path / "out.json"), "--no-table"])
    capsys.readouterr()
    (res,) = json.loads((tmp_path / "out.json").read_text())["results"]
    return dict(res)


def _verdicts(fake: FakeOpenAI, *answers: str) -> None:
    fake.script(*({"content": json.dumps({"verdict": a, "reason": "off topic" if a == "no" else "on topic"})}
                  for a in answers))


def _user(body: dict[str, Any]) -> str:
    return "\n".join(str(m["content"]) for m in body["messages"])


def test_windows_over_the_conversation(tmp_path: Path, fake_openai: FakeOpenAI,
                                       capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    _verdicts(fake_openai, "yes", "yes", "no")
    res = _run(tmp_path, fake_openai, "[{type: conversation-relevance, threshold: 0.7, config: {windowSize: 2}}]",
               capsys, vars="{q: hi, _conversation: " + json.dumps(CONV) + "}")
    (a,) = res["assertions"]
    assert a["score"] == pytest.approx(2 / 3) and not a["pass"]
    assert a["reason"] == "2 out of 3 conversation windows were relevant; turn 3: off topic"
    assert len(fake_openai.requests) == 3
    last = _user(fake_openai.requests[2])   # window of 2: turns 2 and 3, not turn 1
    assert "I like turtles." in last and "About 2.1 million" in last and "capital of France" not in last
    assert "capital of France" in _user(fake_openai.requests[0])


def test_single_turn_default_threshold_and_not(tmp_path: Path, fake_openai: FakeOpenAI,
                                               capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    _verdicts(fake_openai, "yes", "yes")
    res = _run(tmp_path, fake_openai, "[{type: conversation-relevance}, {type: not-conversation-relevance}]", capsys)
    ok, negated = res["assertions"]
    assert ok["pass"] and ok["score"] == 1.0 and ok["threshold"] == 0.5
    assert not negated["pass"] and negated["score"] == 0.0
    assert "hi" in _user(fake_openai.requests[0])   # the prompt and this output are the one turn


def test_a_failing_grader_is_an_error(tmp_path: Path, fake_openai: FakeOpenAI, capsys: pytest.CaptureFixture[str],
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    fake_openai.script(*[{"status": 400}] * 8)
    res = _run(tmp_path, fake_openai, "[{type: not-conversation-relevance}]", capsys)
    assert res["status"] == "error" and not res["pass"]


def test_bad_arguments() -> None:
    assert "takes no value" in bad("conversation-relevance", "x").message
    assert "windowSize" in bad("conversation-relevance", config={"windowSize": 0}).message
    assert "unknown config key" in bad("conversation-relevance", config={"window": 2}).message
