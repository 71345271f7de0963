"""Deterministic string assertions (TextAssertions) through a whole run: the records carry `not-`, weight, metric,
threshold and error rules; a TextAssertion plugin is judged by its judge_text, or by its own evaluate."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from evalrun import config
from evalrun.assertions import engine
from evalrun.run.options import RunOptions
from evalrun.run.runner import Runner
from tests.test_assertions_helpers import context
from tests.test_runner_support import check

VARS = {"q": "The answer is 42, said Zoë", "empty": "", "word": "answer", "rx": "\\d+", "bad": "(", "n": "7"}

#: (assertions, test-level extras): deterministic string checks with not-, weight, metric, threshold and errors
MATRIX: list[tuple[list[dict[str, Any]], dict[str, Any]]] = [
    ([{"type": "contains", "value": "answer"}, {"type": "icontains", "value": "ZOË"},
      {"type": "regex", "value": "\\d+"}], {}),
    ([{"type": "not-contains", "value": "answer"}, {"type": "not-icontains", "value": "nothing"}], {}),
    ([{"type": "contains", "value": "{{ word }}"}, {"type": "regex", "value": "{{ rx }}"},
      {"type": "not-regex", "value": "^x"}], {}),
    ([{"type": "contains-any", "value": ["zzz", "42"]}, {"type": "icontains-all", "value": "THE, said"},
      {"type": "contains-all", "value": ["answer", "missing"]}, {"type": "not-icontains-any", "value": ["q"]}],
     {}),
    ([{"type": "starts-with", "value": "The"}, {"type": "not-starts-with", "value": "x"},
      {"type": "equals", "value": "The answer is 42, said Zoë"}, {"type": "equals", "value": 42}], {}),
    ([{"type": "word-count", "value": {"min": 2, "max": 5}}, {"type": "word-count", "value": 6},
      {"type": "not-is-refusal"}, {"type": "is-refusal"}], {}),
    ([{"type": "contains", "value": "answer", "weight": 3, "metric": "Found"},
      {"type": "contains", "value": "absent", "weight": 0, "metric": "m_{{ n }}"},
      {"type": "regex", "value": "answer", "weight": 0.5}], {}),
    ([{"type": "contains", "value": "answer"}, {"type": "contains", "value": "absent"},
      {"type": "icontains", "value": "nope", "weight": 2}], {"threshold": 0.25}),
    ([{"type": "contains", "value": "answer"}, {"type": "contains", "value": "absent"}], {"threshold": 0.9}),
    # errors: a value that renders to something the handler refuses is that assertion's ERROR (and the case's)
    ([{"type": "contains", "value": "answer"}, {"type": "contains", "value": "{{ empty }}"}], {}),
    ([{"type": "regex", "value": "{{ bad }}"}, {"type": "not-contains", "value": "{{ empty }}"}], {}),
    # a template that does not render ends the case as an ERROR, whichever assertion holds it (a missing
    # attribute renders empty, as in promptfoo's Nunjucks; calling one fails)
    ([{"type": "contains", "value": "answer"}, {"type": "contains", "value": "{{ q.nope.deeper() }}"}], {}),
    # a mixed case (one assertion the lean path does not take) goes through the generic path whole
    ([{"type": "contains", "value": "answer"}, {"type": "is-json"}], {}),
]


def _records(tmp_path: Path) -> list[dict[str, Any]]:
    tests = [{"vars": VARS, "assert": asserts, **extra} for asserts, extra in MATRIX]
    cfg = tmp_path / "evalrun.yaml"
    cfg.write_text(json.dumps({"providers": ["echo"], "prompts": ["{{ q }}", "{{ empty }}"], "tests": tests}))
    suite = config.load([str(cfg)])
    out = tmp_path / "results.jsonl"
    asyncio.run(Runner(suite, RunOptions(results_file=out)).run())
    records = [json.loads(line) for line in out.read_text().splitlines()]
    for r in records:
        r.pop("latency_ms")
    return sorted(records, key=lambda r: r["index"])


def test_text_assertion_records(tmp_path: Path) -> None:
    records = _records(tmp_path)
    assert len(records) == 2 * len(MATRIX)
    assert {r["status"] for r in records} == {"pass", "fail", "error"}  # the matrix reaches every status
    by_test = {(r["test_index"], r["prompt_label"]): r for r in records}
    assert by_test[(0, "{{ q }}")]["status"] == "pass" and by_test[(0, "{{ empty }}")]["status"] == "fail"
    assert [a["pass"] for a in by_test[(1, "{{ q }}")]["assertions"]] == [False, True]  # not- inverts
    assert by_test[(2, "{{ q }}")]["status"] == "pass"  # templated values rendered with the case's vars
    assert [a["pass"] for a in by_test[(3, "{{ q }}")]["assertions"]] == [True, True, False, True]
    assert [a["pass"] for a in by_test[(5, "{{ q }}")]["assertions"]] == [False, True, True, False]
    weighted = by_test[(6, "{{ q }}")]
    assert [a["metric"] for a in weighted["assertions"]] == ["Found", "m_7", None]
    assert weighted["status"] == "pass" and weighted["score"] == pytest.approx(3.5 / 3.5)
    assert by_test[(7, "{{ q }}")]["score"] == pytest.approx(0.25)
    assert by_test[(7, "{{ q }}")]["status"] == "pass" and by_test[(8, "{{ q }}")]["status"] == "fail"
    assert by_test[(9, "{{ q }}")]["status"] == "error"
    assert "non-empty" in by_test[(9, "{{ q }}")]["assertions"][1]["error"]
    assert by_test[(10, "{{ q }}")]["status"] == "error" and by_test[(11, "{{ q }}")]["assertions"] == []
    mixed = by_test[(12, "{{ q }}")]
    assert [a["pass"] for a in mixed["assertions"]] == [True, False] and mixed["status"] == "fail"


def test_a_text_assertion_plugin_is_judged_by_judge_text_or_its_own_evaluate() -> None:
    from evalrun.assertions import Score, TextAssertion
    from evalrun.assertions.text import Contains

    class Own(Contains):
        async def evaluate(self, ctx: Any) -> Score:
            return Score(True, 1.0, "own")

    class Plain(TextAssertion):
        def judge_text(self, output: str, value: Any) -> Score:
            return Score(output == value, 1.0, "plain")

    for cls, reason in ((Own, "own"), (Plain, "plain")):
        spec = check("contains", "x")
        object.__setattr__(spec, "handler", cls(spec))
        result = asyncio.run(engine.evaluate(spec, context("x", "x")))
        assert (result.pass_, result.reason) == (True, reason)
