"""Pure parts of compare and repeats: intervals, prompt pairing, verdict rules."""

from __future__ import annotations

import math
from typing import Any

import pytest

from evalrun.compare import diff, match
from evalrun.run.tally import mean_ci, wilson


@pytest.mark.parametrize(("k", "n", "lo", "hi"), [(5, 5, 0.5655, 1.0), (0, 5, 0.0, 0.4345), (3, 5, 0.2307, 0.8824),
                                                  (1, 1, 0.2065, 1.0), (0, 0, 0.0, 1.0)])
def test_wilson_interval(k: int, n: int, lo: float, hi: float) -> None:
    got = wilson(k, n)
    assert got[0] == pytest.approx(lo, abs=1e-4) and got[1] == pytest.approx(hi, abs=1e-4)


def test_mean_ci() -> None:
    mean, lo, hi = mean_ci([1.0, 2.0, 3.0])  # percentile bootstrap: inside [min, max], about symmetric here
    assert mean == 2 and 1.0 <= lo < 1.7 and 2.3 < hi <= 3.0 and hi - mean == pytest.approx(mean - lo, abs=0.1)
    assert mean_ci([0.5]) == (0.5, 0.5, 0.5)
    assert all(math.isnan(x) for x in mean_ci([]))


def _p(index: int, label: str, sha: str) -> match.PromptInfo:
    return match.PromptInfo(index, index, label, sha)


def test_prompts_pair_by_text_then_label_then_position() -> None:
    a = [_p(0, "first {{q}}", "s1"), _p(1, "fixed", "s2"), _p(2, "gone", "s3")]
    b = [_p(0, "fixed", "s2"), _p(1, "edited {{q}}", "s9"), _p(2, "new", "s8")]  # reordered, edited, replaced
    pairs = {(p.a.label if p.a else None, p.b.label if p.b else None): p.text_changed
             for p in match.pair_prompts(a, b)}
    assert pairs == {("fixed", "fixed"): False, ("first {{q}}", "edited {{q}}"): True, ("gone", "new"): True}
    relabelled = match.pair_prompts([_p(0, "x", "s1")], [_p(3, "y", "s1")])  # same text, new label and place
    assert len(relabelled) == 1 and not relabelled[0].text_changed


def _side(statuses: str, score: float | None = None) -> diff.Side:
    recs = [{"status": {"p": "pass", "f": "fail", "e": "error"}[c], "score": score, "assertions": []}
            for c in statuses]
    return diff.Side.of(recs)


@pytest.mark.parametrize(("a", "b", "kind"), [
    ("p", "f", "newly_failing"), ("f", "p", "newly_passing"), ("p", "e", "new_error"), ("f", "e", "new_error"),
    ("e", "f", "changed"), ("p", "p", "unchanged"), ("e", "e", "unchanged"),
    ("ppppp", "fffff", "newly_failing"), ("fffff", "ppppp", "newly_passing"), ("ppppp", "pppff", "noise"),
    ("ppppp", "ppppp", "unchanged"), ("p", "fffff", "noise"), ("ppppp", "ppppe", "new_error"),
])
def test_verdict_rules(a: str, b: str, kind: str) -> None:
    assert diff.verdict(_side(a), _side(b), 0.0) == kind


def test_tolerance_on_pass_rates_with_repeats() -> None:
    a, b = _side("p" * 20), _side("p" * 12 + "f" * 8)  # 100% -> 60%: intervals apart
    assert diff.verdict(a, b, 0.0) == "newly_failing"
    assert diff.verdict(a, b, 0.5) == "noise"


def _rec(test: int, desc: str | None, status: str, q: str = "x") -> dict[str, Any]:
    return {"test_index": test, "description": desc, "vars": {"q": q}, "provider": "echo", "prompt_index": 0,
            "prompt_label": "p", "prompt_sha": "s", "status": status, "score": 1.0 if status == "pass" else 0.0,
            "assertions": [], "repeat": 0, "index": test}


def test_an_inserted_test_shifts_no_other_when_descriptions_are_unique() -> None:
    a = [_rec(0, "alpha", "pass"), _rec(1, "beta", "pass")]
    b = [_rec(0, "new one", "fail"), _rec(1, "alpha", "pass"), _rec(2, "beta", "fail")]
    d = diff.compare(a, b)
    kinds = {c.label.split(" [")[0]: c.kind for c in d.cases}
    assert kinds == {"alpha": "unchanged", "beta": "newly_failing", "new one": "added"}
    # without descriptions tests are known by position
    same = diff.compare([_rec(0, None, "pass", "a")], [_rec(0, None, "fail", "a")])
    assert [c.kind for c in same.cases] == ["newly_failing"]
