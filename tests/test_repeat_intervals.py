"""Intervals over repeats respect the range of what they measure: Wilson for pass rates, a seeded percentile
bootstrap for scores (deterministic, inside the scores' range)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from evalrun.cli import main
from evalrun.run.tally import mean_ci, wilson


@pytest.mark.parametrize("values", [[0, 1, 0, 1, 1], [0, 0, 0, 0, 1], [1, 1, 1, 1, 0], [0.0, 1.0],
                                    [0.2, 0.9, 0.4], [0.95, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]])
def test_score_intervals_stay_inside_the_scores_range(values: list[float]) -> None:
    mean, lo, hi = mean_ci([float(v) for v in values])
    assert min(values) <= lo <= mean <= hi <= max(values)
    assert (lo, hi) != (mean, mean)  # differing scores: a real interval
    assert mean_ci([float(v) for v in values]) == (mean, lo, hi)  # seeded: deterministic


def test_equal_scores_and_a_single_score_are_their_own_interval() -> None:
    assert mean_ci([0.8] * 5) == (0.8, 0.8, 0.8) and mean_ci([0.3]) == (0.3, 0.3, 0.3)


def test_wilson_stays_in_0_1() -> None:
    for k in range(6):
        lo, hi = wilson(k, 5)
        assert 0 <= lo <= k / 5 <= hi <= 1


def test_repeat_5_of_a_flaky_case_reports_bounded_intervals(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Five runs of a provider that answers right 3 times in 5: the score interval stays in [0, 1]."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "prov.py").write_text(textwrap.dedent("""
        import itertools
        _n = itertools.count()
        def call_api(prompt, options, context):
            return {"output": "yes" if next(_n) % 5 in (0, 2, 4) else "no"}
        """))
    (tmp_path / "c.yaml").write_text(textwrap.dedent("""
        prompts: ["{{q}}"]
        providers: [file://prov.py]
        tests:
          - vars: {q: ask}
            assert: [{type: equals, value: "yes"}]
        """))
    main(["eval", "c.yaml", "--repeat", "5", "-j", "1", "--no-cache", "--no-table", "--no-progress-bar",
          "-o", "r.json"])
    (stats,) = json.loads((tmp_path / "r.json").read_text())["repeat_stats"]
    assert stats["passed"] == 3 and stats["runs"] == 5
    lo, hi = stats["score"]["ci"]
    assert 0.0 <= lo < stats["score"]["mean"] < hi <= 1.0
    mlo, mhi = stats["metrics"]['equals "yes"']["lo"], stats["metrics"]['equals "yes"']["hi"]
    assert mlo >= 0.0 and mhi <= 1.0
    plo, phi = stats["pass_rate_ci"]
    assert plo >= 0.0 and phi <= 1.0
