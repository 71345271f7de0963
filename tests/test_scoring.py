"""Table-driven tests of evalrun.grading.scoring.claims, including every worked example of metrics.md."""

from __future__ import annotations

import pytest

from evalrun.grading.scoring import claims as scoring

T, F = True, False

# The seed page: 4 labelled chunks (Python relevant, JavaScript/Java irrelevant, ...), output claims
# "Python is a high-level language" (correct, chunk 0) and "JavaScript is also popular" (wrong, chunk 1).
SEED = dict(correct=[T, F], entails=[[T, F, F, F], [F, T, F, F]], relevant=[T, F, T, F])
# RAGAS documentation example (LIC).
LIC_R = [[F, T, F, F], [T, F, F, F], [F, T, T, F]]
LIC = dict(correct=[T, T, F], entails=[[F, T, F, F], [F, T, T, F], [F, F, T, F]],
           relevant=scoring.chunk_relevance(LIC_R))


@pytest.mark.parametrize("case,mode,formula,expected", [
    (SEED, "relevant", "default", 0.5),
    (SEED, "irrelevant", "default", 0.5),
    (SEED, "relevant", "ragas", 0.0),
    (SEED, "irrelevant", "ragas", 0.5),
    (LIC, "relevant", "ragas", 0.3333333333333333),
    (LIC, "irrelevant", "ragas", 0.0),
    (LIC, "relevant", "default", 1 / 3),
    # all correct
    (dict(correct=[T, T], entails=[[T, F], [F, T]], relevant=[T, F]), "relevant", "default", 0.0),
    # all wrong, both from the irrelevant chunk
    (dict(correct=[F, F], entails=[[F, T], [F, T]], relevant=[T, F]), "irrelevant", "default", 1.0),
    # wrong claim entailed by both a relevant and an irrelevant chunk: not irrelevant-sourced
    (dict(correct=[F], entails=[[T, T]], relevant=[T, F]), "irrelevant", "default", 0.0),
    # wrong claim no chunk supports: counts in default relevant mode, in neither RAGAS mode
    (dict(correct=[F], entails=[[F, F]], relevant=[T, F]), "relevant", "default", 1.0),
    (dict(correct=[F], entails=[[F, F]], relevant=[T, F]), "relevant", "ragas", 0.0),
    (dict(correct=[F], entails=[[F, F]], relevant=[T, F]), "irrelevant", "default", 0.0),
    # no chunks at all
    (dict(correct=[F, T], entails=[[], []], relevant=[]), "relevant", "default", 0.5),
])
def test_noise_sensitivity(case: dict, mode: str, formula: str, expected: float) -> None:
    assert scoring.noise_sensitivity(case["correct"], case["entails"], case["relevant"], mode, formula) == expected


def test_noise_sensitivity_no_claims_is_none() -> None:
    assert scoring.noise_sensitivity([], [], [T, F]) is None


@pytest.mark.parametrize("kwargs", [
    dict(correct=[T], entails=[[T]], relevant=[T, F]),  # wrong width
    dict(correct=[T, F], entails=[[T, F]], relevant=[T, F]),  # wrong height
    dict(correct=[T], entails=[[T]], relevant=[T], mode="noisy"),
    dict(correct=[T], entails=[[T]], relevant=[T], formula="deepeval"),
])
def test_noise_sensitivity_rejects_bad_shapes_and_options(kwargs: dict) -> None:
    with pytest.raises(ValueError):
        scoring.noise_sensitivity(**kwargs)


@pytest.mark.parametrize("matrix,n,expected", [
    (LIC_R, None, [T, T, T, F]),
    ([[F, F, F]], None, [F, F, F]),
    ([], 3, [F, F, F]),
    ([[T, F], [T, F]], None, [T, F]),
])
def test_chunk_relevance(matrix: list, n: int | None, expected: list) -> None:
    assert scoring.chunk_relevance(matrix, n) == expected


@pytest.mark.parametrize("verdicts,strict,lenient,halluc", [
    ([], None, None, None),
    (["supported", "supported"], 1.0, 1.0, 0.0),
    (["contradicted", "unsupported"], 0.0, 0.5, 1.0),
    (["supported", "unsupported", "contradicted", "supported"], 0.5, 0.75, 0.5),
])
def test_faithfulness_and_hallucination(verdicts: list, strict: float | None, lenient: float | None,
                                        halluc: float | None) -> None:
    assert scoring.faithfulness(verdicts) == strict
    assert scoring.faithfulness(verdicts, lenient=True) == lenient
    assert scoring.hallucination(verdicts) == halluc


# Mastra docs: solar eclipse -- contexts 1, 2 high and used, 5 high but unused, 3 medium, 4 none.
ECLIPSE = (["high", "high", "medium", "none", "high"], [T, T, F, F, F], 0)
# Canberra -- only context 5 is relevant (high, used); 4 ("six states") is low.
CANBERRA = (["none", "none", "none", "low", "high"], [F, F, F, F, T], 0)


@pytest.mark.parametrize("inputs,kwargs,expected", [
    (ECLIPSE, {}, 0.64),
    (ECLIPSE, dict(unused_high_penalty=0.05, missing_per_item=0.1, max_missing_penalty=0.3), 0.69),
    (CANBERRA, {}, 0.26),
    (([], [], 0), {}, 1.0),
    (([], [], 0), dict(scale=10), 10.0),
    ((["high"], [T], 0), {}, 1.0),
    ((["none", "none"], [F, F], 0), {}, 0.0),
    ((["high"], [T], 2), {}, 0.7),  # 2 missing x 0.15
    ((["high"], [T], 9), {}, 0.5),  # missing penalty capped at 0.5
    ((["high"], [F], 9), {}, 0.4),
    ((["low"], [F], 9), {}, 0.0),  # floored at 0
    ((["medium", "high"], [T, T], 0), dict(scale=5), 4.25),
])
def test_context_relevance(inputs: tuple, kwargs: dict, expected: float) -> None:
    assert scoring.context_relevance(*inputs, **kwargs) == pytest.approx(expected, abs=1e-12)


def test_context_relevance_rejects_bad_input() -> None:
    with pytest.raises(ValueError):
        scoring.context_relevance(["high"], [T, F], 0)
    with pytest.raises(ValueError):
        scoring.context_relevance(["very"], [T], 0)


@pytest.mark.parametrize("useful,expected", [
    ([T, F, T, F], (1 + 2 / 3) / 2),  # Mastra docs: 0.83
    ([], 0.0),
    ([F, F], 0.0),
    ([T, T, T], 1.0),
    ([F, T], 0.5),
])
def test_context_precision(useful: list, expected: float) -> None:
    assert scoring.context_precision(useful) == pytest.approx(expected)


def test_context_precision_mastra_example_rounds_to_083() -> None:
    assert round(scoring.context_precision([T, F, T, F]), 2) == 0.83


@pytest.mark.parametrize("attributed,expected", [
    ([], None), ([T, T], 1.0), ([F, F], 0.0), ([T, F, F, T], 0.5),
])
def test_context_recall(attributed: list, expected: float | None) -> None:
    assert scoring.context_recall(attributed) == expected


@pytest.mark.parametrize("score,levels,issues,kwargs,expected", [
    # metrics.md example: avg 0.91, |0.85 - 0.91| <= 0.2 -> 0.85
    (0.85, ["minimal", "none", "minimal", "minimal", "none"], 0, {}, 0.85),
    # discrepancy: grader says 0.95 but dimensions average 0.1 -> min
    (0.95, ["severe"] * 5, 0, {}, 0.1),
    # major issues: 2 x 0.1
    (0.9, ["none"] * 5, 2, {}, 0.7),
    # major issue penalty capped at 0.3
    (0.9, ["none"] * 5, 10, {}, 0.6),
    # clamped into [0, 1]
    (1.7, ["none"] * 5, 0, {}, 1.0),
    (0.05, ["severe"] * 5, 3, {}, 0.0),
    # custom weights
    (0.5, ["moderate"], 0, dict(weights={"moderate": 0.5}), 0.5),
])
def test_noise_robustness(score: float, levels: list, issues: int, kwargs: dict, expected: float) -> None:
    assert scoring.noise_robustness(score, levels, issues, **kwargs) == expected


def test_noise_robustness_rejects_unknown_level() -> None:
    with pytest.raises(ValueError):
        scoring.noise_robustness(0.5, ["catastrophic"], 0)
