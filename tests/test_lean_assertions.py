"""The lean path of deterministic string assertions (engine.lean / engine.evaluate_text, taken by casework for
a case whose assertions are all TextAssertions without transform or config) gives exactly the records of the
generic path (an AssertionContext and engine.evaluate per assertion)."""

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


class GenericEngine:
    """The engine without its lean path: every assertion through engine.evaluate with a context."""

    evaluate = staticmethod(engine.evaluate)
    aggregate = staticmethod(engine.aggregate)


def _records(tmp_path: Path, name: str, eng: Any) -> list[dict[str, Any]]:
    tests = [{"vars": VARS, "assert": asserts, **extra} for asserts, extra in MATRIX]
    folder = tmp_path / name
    folder.mkdir()
    cfg = folder / "evalrun.yaml"
    cfg.write_text(json.dumps({"providers": ["echo"], "prompts": ["{{ q }}", "{{ empty }}"], "tests": tests}))
    suite = config.load([str(cfg)])
    out = folder / "results.jsonl"
    asyncio.run(Runner(suite, RunOptions(results_file=out), engine=eng).run())
    records = [json.loads(line) for line in out.read_text().splitlines()]
    for r in records:
        r.pop("latency_ms")
    return sorted(records, key=lambda r: r["index"])


def test_lean_path_records_equal_the_generic_paths(tmp_path: Path) -> None:
    lean = _records(tmp_path, "lean", engine)
    generic = _records(tmp_path, "generic", GenericEngine())
    assert len(lean) == 2 * len(MATRIX)
    assert lean == generic
    statuses = {r["status"] for r in lean}
    assert statuses == {"pass", "fail", "error"}  # the matrix reaches every status
    by_test = {(r["test_index"], r["prompt_label"]): r for r in lean}
    weighted = by_test[(6, "{{ q }}")]
    assert [a["metric"] for a in weighted["assertions"]] == ["Found", "m_7", None]
    assert weighted["status"] == "pass" and weighted["score"] == pytest.approx(3.5 / 3.5)
    assert by_test[(7, "{{ q }}")]["score"] == pytest.approx(0.25)
    assert by_test[(7, "{{ q }}")]["status"] == "pass" and by_test[(8, "{{ q }}")]["status"] == "fail"
    assert by_test[(9, "{{ q }}")]["status"] == "error"
    assert "non-empty" in by_test[(9, "{{ q }}")]["assertions"][1]["error"]
    assert by_test[(10, "{{ q }}")]["status"] == "error" and by_test[(11, "{{ q }}")]["assertions"] == []


def test_lean_applies_to_text_assertions_without_transform_or_config() -> None:
    assert engine.lean(check("contains", "x")) and engine.lean(check("not-regex", "a+"))
    assert not engine.lean(check("is-json"))
    assert not engine.lean(check("contains", "x", transform="output.upper()"))


def test_a_text_assertion_that_overrides_evaluate_is_not_judged_by_judge_text_alone() -> None:
    from evalrun.assertions import Score, TextAssertion
    from evalrun.assertions.text import Contains

    class Own(Contains):
        async def evaluate(self, ctx: Any) -> Score:
            return Score(True, 1.0, "own")

    class Plain(TextAssertion):
        def judge_text(self, output: str, value: Any) -> Score:
            return Score(output == value, 1.0, "plain")

    assert Contains.pure_text and Plain.pure_text and not Own.pure_text
