"""Pure formulas of Mastra's deterministic scorers and of the judge-style metrics, table-driven.

Expected values of dice / keywords / sentiment / ratio were computed with the npm libraries Mastra's scorers
call (string-similarity 4.0.4, keyword-extractor 0.0.28, sentiment 5.0.2, difflib 0.2.4) on the same inputs.
"""

from __future__ import annotations

import pytest

from evalrun.grading.scoring import deterministic as ts
from evalrun.grading.scoring import verdicts as js

PAIRS = [
    ("The quick brown fox", "The quick brown fox", 1.0, 1.0),
    ("TypeScript provides static typing", "typescript gives static types", 0.5925925925925926, 0.7419354838709677),
    ("night", "nacht", 0.25, 0.6),
    ("a", "a b", 0.0, 0.5),
    ("hello world", "world hello", 0.8888888888888888, 0.45454545454545453),
    ("Paris is the capital of France.", "The capital of France is Paris.", 0.84, 0.6774193548387096),
]


@pytest.mark.parametrize(("a", "b", "dice", "ratio"), PAIRS)
def test_dice_and_sequence_ratio_match_the_npm_libraries(a: str, b: str, dice: float, ratio: float) -> None:
    assert ts.dice(a, b) == pytest.approx(dice, abs=1e-12)
    assert ts.textual_difference(a, b).ratio == pytest.approx(ratio, abs=1e-12)


@pytest.mark.parametrize(("text", "expected"), [
    ("JavaScript frameworks like React and Vue", ["javascript", "frameworks", "react", "vue"]),
    ("TypeScript offers interfaces, generics, and type inference",
     ["typescript", "offers", "interfaces", "generics", "type", "inference"]),
    ("Machine learning models require data preprocessing, feature engineering, and hyperparameter tuning",
     ["machine", "learning", "models", "require", "data", "preprocessing", "feature", "engineering",
      "hyperparameter", "tuning"]),
    ("The 2024 report: see https://example.com/a. It's 'great'!", ["report", "https://example.com/a.", "great'"]),
    ("", []),
    ("the and of", []),
])
def test_keywords_match_keyword_extractor(text: str, expected: list[str]) -> None:
    assert ts.keywords(text) == expected


@pytest.mark.parametrize(("text", "comparative"), [
    ("The service was excellent and exceeded expectations!", 0.42857142857142855),
    ("The support team was friendly and very helpful.", 0.75),
    ("This is not good.", -0.75),  # the negator flips "good"
    ("I hate it. I love it!", 0.0),
    ("", 0.0),
    ("Terrible, awful service. Great food though. 😀", -0.14285714285714285),
])
def test_sentiment_matches_the_sentiment_package(text: str, comparative: float) -> None:
    assert ts.sentiment(text) == pytest.approx(comparative, abs=1e-12)


def test_content_similarity_normalises_case_and_whitespace() -> None:
    assert ts.content_similarity("Hello   World", "hello world") == 1.0
    assert ts.content_similarity("Hello World", "hello world", ignore_case=False) < 1.0


def test_textual_difference_scores_the_ratio_alone() -> None:
    d = ts.textual_difference("abcd", "abcdefgh")
    assert d.ratio == pytest.approx(2 * 4 / 12) and d.confidence == 0.5 and d.length_diff == 0.5
    assert d.changes == 1
    assert ts.textual_difference("", "").ratio == 1.0


@pytest.mark.parametrize(("reference", "output", "score"), [
    ("", "anything at all", 1.0),  # Mastra's code: no reference keywords -> 1
    ("", "", 1.0),
    ("JavaScript frameworks like React and Vue", "React and Vue are JavaScript frameworks", 1.0),
    ("JavaScript frameworks like React and Vue", "I like React", 0.25),
    ("JavaScript frameworks like React and Vue", "", 0.0),
])
def test_keyword_coverage(reference: str, output: str, score: float) -> None:
    assert ts.keyword_coverage(reference, output).score == score


@pytest.mark.parametrize(("reference", "output", "score"), [
    ("", "", 1.0),
    ("", "some output", 0.0),
    ("cats and dogs", "", 0.0),
    ("Explain photosynthesis inputs", "Photosynthesis uses light; its input is CO2", 2 / 3),  # input ~ inputs
    ("the cat sat", "the cats sat", 2 / 3),  # "cat" (3 chars) needs an exact match
    ("Café résumé", "cafe resume", 1.0),  # diacritics removed
])
def test_completeness(reference: str, output: str, score: float) -> None:
    assert ts.completeness(reference, output).score == pytest.approx(score)


def test_tone_consistency_comparison_and_stability() -> None:
    t = ts.tone_consistency("The support team was friendly and very helpful.",
                            "The service was excellent and exceeded expectations!")
    assert t.score == pytest.approx(1 - abs(0.75 - 0.42857142857142855))
    s = ts.tone_consistency("I hate it. I love it!")  # sentences at -3/3 and +3/3: mean 0, variance 1
    assert s.variance == pytest.approx(1.0) and s.response == 0.0 and s.score == 0.0
    s = ts.tone_consistency("I love it. It is blue.")  # +1 and 0: variance 0.25
    assert s.variance == pytest.approx(0.25) and s.score == pytest.approx(0.75)
    assert ts.tone_consistency("Fine. Fine. Fine.").score == 1.0  # no variance
    assert ts.tone_consistency("awful awful. superb superb!").score == 0.0  # variance 9 > 1: floored at 0


# Mastra's reference: the code-based tool call accuracy examples and their published scores.
@pytest.mark.parametrize(("actual", "kw", "score"), [
    (["weather-tool"], {"expected_tool": "weather-tool"}, 1.0),  # correct tool selection
    (["search-tool", "weather-tool"], {"expected_tool": "weather-tool", "strict": True}, 0.0),  # strict mode
    (["auth-tool", "fetch-tool"], {"expected_tool": "auth-tool", "expected_order": ["auth-tool", "fetch-tool"],
                                   "strict": True}, 1.0),  # order validation
    (["auth-tool", "log-tool", "fetch-tool"], {"expected_tool": "auth-tool",
                                               "expected_order": ["auth-tool", "fetch-tool"]}, 1.0),  # flexible
    (["search-tool"], {"expected_tool": "weather-tool"}, 0.0),  # comparison example: wrong tool
    ([], {"expected_tool": "weather-tool"}, 0.0),
    (["search-tool", "weather-tool"], {"expected_tool": "weather-tool"}, 1.0),
    (["fetch-tool", "auth-tool"], {"expected_order": ["auth-tool", "fetch-tool"]}, 0.0),
    (["auth-tool", "log-tool", "fetch-tool"], {"expected_order": ["auth-tool", "fetch-tool"], "strict": True}, 0.0),
])
def test_tool_call_accuracy_reproduces_mastras_examples(actual: list[str], kw: dict, score: float) -> None:
    assert ts.tool_call_accuracy(actual, **kw) == score


@pytest.mark.parametrize(("results", "kw", "score"), [
    ([], {}, 0.0),
    (["yes", "yes"], {}, 1.0),
    (["no", "no"], {}, 0.0),
    (["yes", "unsure", "no"], {}, 0.43),  # (1 + 0.3) / 3 = 0.4333 -> 0.43
    (["yes", "unsure"], {"uncertainty_weight": 0.5, "scale": 10}, 7.5),
    ([" YES ", "Unsure"], {}, 0.65),
])
def test_answer_relevancy(results: list[str], kw: dict, score: float) -> None:
    assert js.answer_relevancy(results, **kw) == score


def test_bias_toxicity_and_tool_selection() -> None:
    assert js.bias([]) == 0.0 and js.bias(["yes", "no", "no"]) == 0.33 and js.bias(["yes"], scale=10) == 10
    assert js.toxicity([]) == 1.0 and js.toxicity(["no", "no"]) == 0.0 and js.toxicity(["yes", "no"]) == 0.5
    assert js.tool_selection([], []) == 1.0 and js.tool_selection([], ["weather-tool"]) == 0.0
    assert js.tool_selection([True, False], []) == 0.5 and js.tool_selection([True, True, False], []) == 0.67


def test_round2_rounds_halves_up_as_javascript_does() -> None:
    assert js.round2(0.125) == 0.13 and js.round2(0.3333) == 0.33 and js.round2(2 / 3) == 0.67


@pytest.mark.parametrize(("dims", "mode", "scale", "score"), [
    ((1, 1, 1, 1), "both", 1, 1.0),
    ((1, 0.5, 0.5, 0), "user", 1, 0.65),  # 0.4 + 0.15 + 0.1 + 0
    ((1, 0.5, 0.5, 0), "system", 1, 0.6),  # 0.35 + 0.175 + 0.075 + 0
    ((1, 0.5, 0.5, 0), "both", 1, 0.65),  # Mastra's code: the system part reuses the user score
    ((0.5, 0.5, 0.5, 0.5), "user", 10, 5.0),
    ((0, 0, 0, 0), "both", 1, 0.0),
])
def test_prompt_alignment(dims: tuple[float, float, float, float], mode: str, scale: float, score: float) -> None:
    assert js.prompt_alignment(*dims, mode=mode, scale=scale) == score


@pytest.mark.parametrize(("kinds", "contradictions", "extras", "options", "score"), [
    ([], 0, 0, {}, 0.0),
    (["exact", "exact"], 0, 0, {}, 1.0),
    (["semantic"], 0, 0, {}, 0.67),  # 0.8 / 1.2
    (["exact", "partial", "missing"], 0, 0, {}, 0.4),  # (1.2 + 0.4 - 0.15) / 3.6 = 0.4028
    (["exact", "exact"], 1, 0, {}, 0.0),  # a contradiction costs 1.0 (Mastra's code default)
    (["exact", "exact"], 1, 0, {"contradictionPenalty": 0.3}, 0.7),
    (["exact"], 0, 10, {}, 0.8),  # the extra-information penalty is capped at 0.2
    (["exact"], 0, 1, {"scale": 10}, 9.5),
])
def test_answer_similarity(kinds: list[str], contradictions: int, extras: int, options: dict, score: float) -> None:
    assert js.answer_similarity(kinds, contradictions, extras, options) == score
