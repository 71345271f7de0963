"""max-score: the output whose other assertions scored highest passes; weights, sum, threshold, ties, not-,
errors (one output, no other assertion, outside a run) and bad values."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from evalrun.assertions.selection import aggregate, winner
from evalrun.cli import main
from evalrun.types import AssertionResult
from tests.test_assertions_helpers import bad, run


def _eval(tmp_path: Path, body: str, capsys: pytest.CaptureFixture[str],
          prompts: str = '["{{a}} apple", "{{a}} apple orange", "{{a}}"]') -> dict[tuple[int, str], dict[str, Any]]:
    cfg = tmp_path / "suite.yaml"
    cfg.write_text(f"prompts: {prompts}\nproviders: [echo]\ntests:\n" + textwrap.indent(textwrap.dedent(body), "  "))
    out = tmp_path / "out.json"
    main(["eval", str(cfg), "--no-cache", "-o", str(out), "-j", "1", "--no-table"])
    capsys.readouterr()
    return {(r["test_index"], r["output"]): r for r in json.loads(out.read_text())["results"]}


def test_the_highest_aggregate_wins_and_losers_fail(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    res = _eval(tmp_path, """\
        - vars: {a: x}
          assert:
            - {type: contains, value: apple}
            - {type: contains, value: orange, weight: 0}
            - {type: max-score}
        """, capsys)
    best = res[(0, "x apple orange")]
    ms = best["assertions"][-1]
    assert best["pass"] and ms["pass"] and ms["score"] is None and best["score"] == 1.0
    assert ms["reason"] == "Selected as highest scoring output (score: 1.000)"
    loser = res[(0, "x apple")]["assertions"][-1]
    assert not loser["pass"] and loser["reason"] == "Not selected (score: 0.500, max: 1.000)"
    assert loser["details"]["maxScore"] == 0.5 and loser["details"]["assertionCount"] == 2
    assert not res[(0, "x")]["pass"]


def test_weights_sum_threshold_and_not(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    res = _eval(tmp_path, """\
        - vars: {a: x}
          assert:
            - {type: contains, value: apple}
            - {type: contains, value: orange}
            - {type: max-score, value: {method: sum, weights: {contains: 2}, threshold: 5}}
        - vars: {a: x}
          assert:
            - {type: icontains, value: APPLE}
            - {type: contains, value: orange}
            - {type: max-score, value: {weights: {contains: 0}}}
        - vars: {a: x}
          assert:
            - {type: contains, value: apple}
            - {type: not-max-score}
        """, capsys)
    top = res[(0, "x apple orange")]["assertions"][-1]
    assert not top["pass"] and top["reason"] == "Not selected - score 4.000 below threshold 5"
    # weight 0 for contains: only icontains counts, a tie between the first two: the first wins
    assert res[(1, "x apple")]["assertions"][-1]["pass"]
    assert not res[(1, "x apple orange")]["assertions"][-1]["pass"]
    assert not res[(2, "x apple")]["pass"] and res[(2, "x")]["assertions"][-1]["pass"]


def test_errors_one_output_and_no_other_assertion(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    res = _eval(tmp_path, """\
        - vars: {a: x}
          assert: [{type: contains, value: x}, {type: max-score}]
        """, capsys, prompts='["{{a}}"]')
    assert res[(0, "x")]["status"] == "error" and "at least 2 outputs" in res[(0, "x")]["error"]
    res = _eval(tmp_path, "- vars: {a: x}\n  assert: [{type: max-score}]\n", capsys, prompts='["{{a}}", "{{a}}!"]')
    assert all(r["status"] == "error" and "at least one other assertion" in r["error"] for r in res.values())
    r = run("max-score", "out")
    assert r.error and "runs in `evalrun eval`" in r.error


def test_aggregate_and_winner() -> None:
    def res(t: str, s: float | None, err: str | None = None) -> AssertionResult:
        return AssertionResult(type=t, pass_=True, score=s, threshold=None, weight=1.0, reason="", error=err)
    rs = [res("contains", 1.0), res("llm-rubric", 0.5), res("select-best", 1.0), res("python", None, "boom")]
    assert aggregate(rs, {}, "average") == (0.5, 3, 3.0)
    assert aggregate(rs, {"llm-rubric": 3}, "sum") == (2.5, 3, 5.0)
    assert winner([0.2, 0.9, 0.9], None) == 1 and winner([0.2, 0.4], 0.5) is None


@pytest.mark.parametrize(("value", "msg"), [
    ("x", "must be a mapping"), ({"method": "median"}, "average or sum"), ({"weights": {"a": -1}}, "weights"),
    ({"threshold": "high"}, "threshold must be a number"), ({"metod": "sum"}, "unknown key(s) metod")])
def test_bad_values(value: Any, msg: str) -> None:
    assert msg in bad("max-score", value).message
