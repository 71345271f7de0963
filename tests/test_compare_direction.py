"""`compare` reads each assertion's score in its own direction: for noise-sensitivity, hallucination, bias,
toxicity (every built-in lower-is-better type) and a plugin that declares `lower_is_better`, a rise is the
regression, in the per-assertion deltas, the per-metric roll-up and the text, Markdown and HTML diffs."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from evalrun.assertions import registry
from evalrun.assertions.base import Assertion, AssertionContext, Score
from evalrun.cli import main
from evalrun.compare import diff
from evalrun.run.store import assertion_dict
from evalrun.types import AssertionResult, AssertionSpec
from tests.fakeserver import FakeOpenAI
from tests.graderfakes import evaluate, make_grader, route

BUILTIN_LOWER = {"noise-sensitivity", "hallucination", "bias", "toxicity"}


def test_the_registry_is_the_one_source_of_the_direction() -> None:
    registry.load_all()
    lower = {n for n in registry.names() if registry.get(n).lower_is_better}  # type: ignore[union-attr]
    assert lower == BUILTIN_LOWER


def _record(result: AssertionResult) -> dict[str, Any]:
    a = assertion_dict(result)
    return {"id": "c", "test_index": 0, "description": "case", "vars": {}, "provider": "p", "prompt_index": 0,
            "prompt_label": "p", "prompt_sha": "x", "repeat": 0, "status": "pass" if a["pass"] else "fail",
            "score": 0.5, "assertions": [a]}


def _check_worse(a: AssertionResult, b: AssertionResult, tmp_path: Path) -> None:
    """b's score is higher than a's for a lower-is-better type: every view calls that a regression."""
    assert a.lower_is_better and b.lower_is_better and b.score > a.score  # type: ignore[operator]
    d = diff.compare([_record(a)], [_record(b)])
    data = diff.as_dict(d, {"ref": "A", "label": "A"}, {"ref": "B", "label": "B"})
    (m,) = data["cases"][0]["metric_deltas"]
    assert m["regressed"] and not m["improved"] and m["lower_is_better"] and m["delta"] > 0
    (row,) = data["by_metric"]
    assert (row["cases_regressed"], row["cases_improved"], row["lower_is_better"]) == (1, 0, True)
    assert data["summary"]["regressions"] == 1
    text = diff.text(data).splitlines()
    line = next(x for x in text if x.startswith(f"  {m['name']} (lower is better) "))  # the By metric table
    assert line.split()[-2:] == ["1", "0"]  # cases regressed, cases improved
    assert "| 1 | 0 |" in diff.markdown(data)
    back = diff.compare([_record(b)], [_record(a)])  # and the fall is an improvement
    m = back.cases[0].metric_deltas[0]
    assert m["improved"] and not m["regressed"] and not back.cases[0].regression
    from evalrun.report import html

    html.write_diff(tmp_path / "d.html", data, d)
    assert "lower is better" in (tmp_path / "d.html").read_text()  # the case's assertion table says so
    bar = html.delta_bars([(row["name"], row["delta"], True)])
    assert f'fill="{html.FAIL}"' in bar and "↓" in bar  # a rise of a lower-is-better metric is red


def _spec(type_: str, **kw: Any) -> AssertionSpec:
    return AssertionSpec(type=type_, key_path="tests[0].assert[0]", **kw)


def test_bias_and_toxicity_rising_is_a_regression(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    why = {"reason": "because"}
    verdicts = {"results": [{"result": "no", "reason": "r"}, {"result": "no", "reason": "r"}]}
    route(fake_openai, extract={"opinions": ["o1", "o2"]}, judge=verdicts, reason=why)
    a = evaluate(_spec("bias"), "out", {}, make_grader(fake_openai))
    route(fake_openai, extract={"opinions": ["o1", "o2"]},
          judge={"results": [{"result": "yes", "reason": "r"}, {"result": "no", "reason": "r"}]}, reason=why)
    b = evaluate(_spec("bias"), "out 2", {}, make_grader(fake_openai))
    _check_worse(a, b, tmp_path)
    route(fake_openai, judge={"verdicts": [{"verdict": "no", "reason": "fine"}]}, reason=why)
    a = evaluate(_spec("toxicity"), "kind", {"query": "hi"}, make_grader(fake_openai))
    route(fake_openai, judge={"verdicts": [{"verdict": "yes", "reason": "insult"}]}, reason=why)
    b = evaluate(_spec("toxicity"), "rude", {"query": "hi"}, make_grader(fake_openai))
    _check_worse(a, b, tmp_path)


class _Loudness(Assertion):
    """A plugin that declares its direction: the share of capital letters, lower is better."""

    lower_is_better = True

    async def evaluate(self, ctx: AssertionContext) -> Score:
        letters = [c for c in ctx.output if c.isalpha()]
        share = sum(c.isupper() for c in letters) / max(1, len(letters))
        return Score(share <= 0.5, share, f"{share:.2f} capitals")


def test_a_plugin_that_declares_lower_is_better(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    registry.load_all()
    monkeypatch.setitem(registry.__dict__, "_REGISTRY", dict(registry._REGISTRY))
    registry.register("loudness")(_Loudness)
    a = evaluate(_spec("loudness"), "quiet words", {}, None)
    b = evaluate(_spec("loudness"), "LOUD words", {}, None)
    _check_worse(a, b, tmp_path)
    negated = evaluate(AssertionSpec(type="loudness", negate=True), "LOUD words", {}, None)
    assert negated.score == b.score and not negated.lower_is_better  # `not-` keeps the score, flips the direction


SUITE = """
description: direction
providers: [echo]
prompts: ["{PROMPT}"]
tests:
  - description: refund
    vars:
      good: Refunds are processed within 30 days.
      bad: Refunds are processed within 90 days. Refunds are paid in gold coins.
      context: Refunds are processed within 30 days of the request.
    assert:
      - type: noise-sensitivity
        value: Refunds are processed within 30 days.
      - type: hallucination
      - type: python
        value: "0.8"
"""


def test_noise_sensitivity_and_hallucination_end_to_end(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    for name, prompt in (("a", "{{good}}"), ("b", "{{bad}}")):
        (tmp_path / "evalrun.yaml").write_text(textwrap.dedent(SUITE.format(PROMPT=prompt)))
        main(["eval", "evalrun.yaml", "--no-progress-bar", "--no-table", "-o", f"{name}.json"])
    ra = json.loads((tmp_path / "a.json").read_text())["results"][0]
    assert ra["status"] == "pass"
    assert ra["score"] == pytest.approx((1 - ra["assertions"][0]["score"] + 1 - ra["assertions"][1]["score"]
                                         + 0.8) / 3)  # python's 0.8 enters as 0.8, not as 1 - 0.8
    capsys.readouterr()
    assert main(["compare", "a.json", "b.json", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    deltas = {m["name"]: m for m in data["cases"][0]["metric_deltas"]}
    for name in ('noise-sensitivity "Refunds are processed within 30 days."', "hallucination"):
        assert deltas[name]["delta"] > 0 and deltas[name]["regressed"] and deltas[name]["lower_is_better"]
    assert not deltas['python "0.8"']["regressed"] and "lower_is_better" not in deltas['python "0.8"']
    by_metric = {m["name"]: m for m in data["by_metric"]}
    noise = by_metric['noise-sensitivity "Refunds are processed within 30 days."']
    assert noise["cases_regressed"] == 1 and noise["cases_improved"] == 0
    assert main(["compare", "a.json", "b.json"]) == 0
    text = capsys.readouterr().out
    header = next(x for x in text.splitlines() if x.startswith("  metric "))
    assert header.split()[-4:] == ["cases", "regressed", "cases", "improved"]
    line = next(x for x in text.splitlines()
                if x.startswith("  noise-sensitivity \"Refunds are processed within 30 days.\" (lower is better) "))
    assert line.split()[-2:] == ["1", "0"]
