"""tool-call-f1: set F1 of the tools called against the expected names, over the output shapes promptfoo reads."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.test_assertions_helpers import bad, run

OPENAI = json.dumps({"tool_calls": [{"function": {"name": "search"}}, {"function": {"name": "weather"}}]})


@pytest.mark.parametrize(("output", "called"), [
    (OPENAI, {"search", "weather"}),
    (json.dumps([{"function": {"name": "search"}}, {"name": "weather"}]), {"search", "weather"}),
    (json.dumps([{"type": "tool_use", "name": "search"}, {"type": "text", "text": "hi"}]), {"search"}),
    (json.dumps({"type": "tool_use", "name": "search"}), {"search"}),
    (json.dumps([{"functionCall": {"name": "search"}}]), {"search"}),
    (json.dumps({"toolCall": {"functionCalls": [{"name": "search"}, {"name": "weather"}]}}), {"search", "weather"}),
    ('I will call tools\n{"type": "tool_use", "name": "search"}\n[{"name": "weather"}]', {"search", "weather"}),
    ("no tools at all", set()),
])
def test_called_tools_in_each_shape(output: str, called: set[str]) -> None:
    r = run("tool-call-f1", output, ["search", "weather"], threshold=0)
    assert set(r.details["called"]) == called


def test_f1_values_default_threshold_and_reasons() -> None:
    r = run("tool-call-f1", OPENAI, "search, weather")
    assert r.pass_ and r.score == 1.0 and r.threshold == 1.0
    r = run("tool-call-f1", OPENAI, ["search", "calendar"])      # p = 1/2, r = 1/2
    assert not r.pass_ and r.score == pytest.approx(0.5)
    assert r.reason == ("Tool Call F1 score 0.500 is below threshold 1. Expected: [calendar, search], Called: "
                        "[search, weather]. Precision=0.500, Recall=0.500")
    r = run("tool-call-f1", OPENAI, ["search"], threshold=0.6)   # p = 1/2, r = 1: F1 2/3
    assert r.pass_ and r.score == pytest.approx(2 / 3)
    assert run("tool-call-f1", "plain text", "search").score == 0.0


def test_not_keeps_the_score() -> None:
    r = run("not-tool-call-f1", OPENAI, ["search", "calendar"])
    assert r.pass_ and r.score == pytest.approx(0.5)
    assert not run("not-tool-call-f1", OPENAI, "search,weather").pass_


@pytest.mark.parametrize("value", [3, {"a": 1}, []])
def test_bad_values(value: Any) -> None:
    assert "tool-call-f1" in bad("tool-call-f1", value).message
    assert "value is required" in bad("tool-call-f1").message
