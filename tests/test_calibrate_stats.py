"""evalrun/calibration/stats.py: every figure `calibrate` prints, on inputs small enough to work out by hand."""

from __future__ import annotations

import pytest

from evalrun.calibration import stats
from evalrun.calibration.analysis import metric_figures

P, F = True, False


def test_verdict_figures_by_hand() -> None:
    # human PASS: items 0, 1 (grader PASS both); human FAIL: items 2 (grader PASS), 3 (grader FAIL)
    predicted, human = [P, P, P, F], [P, P, F, F]
    assert stats.balanced_accuracy(predicted, human) == pytest.approx((2 / 2 + 1 / 2) / 2)  # 0.75
    # observed 3/4; chance 3/4*1/2 + 1/4*1/2 = 1/2; kappa (3/4 - 1/2) / (1 - 1/2)
    assert stats.cohen_kappa(predicted, human) == pytest.approx(0.5)
    assert stats.precision_fail(predicted, human) == pytest.approx(1.0)  # its one FAIL is a human FAIL
    assert stats.recall_fail(predicted, human) == pytest.approx(0.5)  # finds 1 of the 2 human FAILs
    assert stats.confusion(predicted, human) == {"human_pass": {"grader_pass": 2, "grader_fail": 0},
                                                 "human_fail": {"grader_pass": 1, "grader_fail": 1}}


def test_symmetric_case_and_kappa_below_agreement() -> None:
    predicted, human = [P, P, F, F, P, F], [P, F, F, F, P, P]
    assert stats.balanced_accuracy(predicted, human) == pytest.approx(2 / 3)
    assert stats.cohen_kappa(predicted, human) == pytest.approx(1 / 3)  # (4/6 - 1/2) / (1/2)
    assert stats.precision_fail(predicted, human) == pytest.approx(2 / 3)
    assert stats.recall_fail(predicted, human) == pytest.approx(2 / 3)


def test_undefined_figures_are_none() -> None:
    assert stats.balanced_accuracy([P, F], [P, P]) is None  # no human FAIL
    assert stats.cohen_kappa([P, P], [P, P]) is None  # chance agreement 1
    assert stats.precision_fail([P, P], [P, F]) is None  # the grader never fails
    assert stats.auroc([0.1, 0.2], [P, P]) is None


def test_auroc_with_ties() -> None:
    # PASS/FAIL pairs: (0.9, 0.5) 1, (0.9, 0.1) 1, (0.5, 0.5) a tie: 1/2, (0.5, 0.1) 1 -> 3.5 / 4
    scores, human = [0.9, 0.5, 0.5, 0.1], [P, P, F, F]
    assert stats.auroc(scores, human) == pytest.approx(0.875)
    assert stats.auroc(scores, human, higher=False) == pytest.approx(0.125)
    assert stats.auroc([0.3] * 4, human) == pytest.approx(0.5)
    assert stats.average_ranks([0.5, 0.1, 0.5, 0.9]).tolist() == [2.5, 1.0, 2.5, 4.0]


def test_best_threshold_takes_the_lowest_of_equal_ones() -> None:
    scores, human = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6], [F, F, P, F, P, P]
    # 0.25: PASS recall 3/3, FAIL recall 2/3; 0.45: 2/3 and 3/3 -- both 5/6; 0.35: 2/3 and 2/3
    t, ba = stats.best_threshold(scores, human)  # type: ignore[misc]
    assert t == pytest.approx(0.25) and ba == pytest.approx(5 / 6)
    # lower passes: the same two plateaus mirrored; the lowest threshold is now -0.45 (PASS when score <= it)
    t_low, _ = stats.best_threshold([-s for s in scores], human, higher=False)  # type: ignore[misc]
    assert t_low == pytest.approx(-0.45)
    assert stats.passes([-s for s in scores], t_low, higher=False).tolist() == [F, F, F, F, P, P]


def test_cross_validated_threshold_by_hand() -> None:
    scores = [i / 8 for i in range(1, 9)]  # exact binary fractions: midpoints are exact
    human = [F, F, F, P, F, P, P, P]
    cv = stats.cross_validated_threshold(scores, human, fold_of=[0, 1, 0, 1, 0, 1, 0, 1])
    assert cv is not None
    # fold 0 is graded by the threshold fitted on fold 1 (0.25F 0.5P 0.75P 1.0P -> 0.375): 0.125 F, 0.375 P, 0.625 P,
    # 0.875 P; fold 1 by the one fitted on fold 0 (0.125F 0.375F 0.625F 0.875P -> 0.75): 0.25 F, 0.5 F, 0.75 P, 1.0 P
    assert cv.fold_thresholds == (0.375, 0.75)
    assert cv.oof_predicted == (F, F, P, F, P, P, P, P)
    # human PASS (items 3, 5, 6, 7) found 3 of 4; human FAIL (0, 1, 2, 4) 2 of 4 -> (3/4 + 2/4) / 2
    assert cv.oof_balanced_accuracy == pytest.approx(0.625)
    # on all eight: 0.4375 (PASS 4/4, FAIL 3/4) and 0.6875 (3/4, 4/4) tie at 0.875; the lower is kept
    assert cv.threshold == pytest.approx(0.4375) and cv.in_sample == pytest.approx(0.875)


def test_seeded_folds_are_stratified_and_reproducible() -> None:
    human = [P] * 12 + [F] * 8
    a, b = stats.folds(human, 4, seed=7), stats.folds(human, 4, seed=7)
    assert a == b and a != stats.folds(human, 4, seed=8)
    for k in range(4):
        assert sum(1 for f, h in zip(a, human, strict=True) if f == k and h) == 3
        assert sum(1 for f, h in zip(a, human, strict=True) if f == k and not h) == 2
    scores = [(i * 37 % 20) / 20 for i in range(20)]
    cv = stats.cross_validated_threshold(scores, human, k=4, seed=7)
    again = stats.cross_validated_threshold(scores, human, fold_of=a)
    assert cv is not None and again is not None and cv.oof_balanced_accuracy == again.oof_balanced_accuracy


def test_bootstrap_interval() -> None:
    assert stats.bootstrap(lambda idx: 0.5, 10) == (0.5, 0.5)
    values = [float(i) for i in range(50)]
    lo, hi = stats.bootstrap(lambda idx: sum(values[i] for i in idx) / len(idx), 50, seed=1)  # type: ignore[misc]
    assert lo < 24.5 < hi and stats.bootstrap(lambda idx: sum(values[i] for i in idx) / len(idx), 50, seed=1) \
        == (lo, hi)
    assert stats.bootstrap(lambda idx: None, 10) is None


def _items(n_pass: int, n_fail: int) -> list[dict[str, object]]:
    out = []
    for i in range(n_pass + n_fail):
        human = i < n_pass
        score = (0.6 if human else 0.4) + (i % 5) / 100
        out.append({"case": f"c{i}", "score": score, "verdict": score >= 0.5, "human": human, "threshold": 0.5,
                    "higher": True, "assertion": {"type": "faithfulness"}})
    return out


def test_too_few_labels_says_so_and_keeps_the_counts() -> None:
    fig = metric_figures("faithfulness", "builtin", _items(19, 25))
    assert fig["enough_labels"] is False and "too few labels" in fig["note"] and "19 pass" in fig["note"]
    assert fig["balanced_accuracy"] is None and fig["suggested_threshold"] is None and fig["auroc"] is None
    assert fig["confusion"] == {"human_pass": {"grader_pass": 19, "grader_fail": 0},
                                "human_fail": {"grader_pass": 0, "grader_fail": 25}}
    enough = metric_figures("faithfulness", "builtin", _items(20, 25))
    assert enough["note"] is None and enough["balanced_accuracy"] == 1.0 and enough["auroc"] == 1.0
    assert enough["oof_balanced_accuracy"] == 1.0 and 0.44 < enough["suggested_threshold"] < 0.6


def test_disagreements_worst_first_on_the_recorded_scale() -> None:
    """A negated metric records 1 - score and passes above 1 - threshold: 0.9 is the surer wrong PASS than 0.35
    (0.6 and 0.05 past 0.3), though 0.35 lies farther from the written threshold 0.7."""
    from evalrun.calibration.analysis import calibrate
    from evalrun.calibration.labels import Label, Match

    matches = []
    for n, score in enumerate([0.35, 0.9, 0.1]):
        a = {"type": "not-faithfulness", "score": score, "pass": score > 0.3, "threshold": 0.7, "grader": "builtin"}
        rec = {"id": f"c{n}", "description": f"d{n}", "assertions": [a]}
        matches.append(Match(Label(f"l:{n}", False, "not-faithfulness", case=f"c{n}"), rec, a, "id"))
    [m] = calibrate(matches)["metrics"]
    assert [d["case"] for d in m["disagreements"]] == ["c1", "c0"]
