"""faithfulness, hallucination, context-relevance, context-precision/-recall and noise-robustness end to end."""

from __future__ import annotations

from typing import Any

import pytest

from evalrun.assertions import engine
from evalrun.errors import ConfigError
from evalrun.types import AssertionSpec
from tests.fakeserver import FakeOpenAI
from tests.graderfakes import evaluate, make_grader, route, steps_called, user_text

CONTEXT = ["Paris is the capital of France.", "France is in Europe.", "Tokyo has great sushi."]


def verdicts(*labels: str) -> dict[str, Any]:
    return {"verdicts": [{"verdict": v, "reason": f"because {i}", "evidence": [0] if v == "supported" else []}
                         for i, v in enumerate(labels)]}


def spec(type_: str, **kw: Any) -> AssertionSpec:
    return AssertionSpec(type=type_, key_path="tests[0].assert[0]", **kw)


# ---------------------------------------------------------------- faithfulness / hallucination
@pytest.mark.parametrize("type_", ["faithfulness", "context-faithfulness"])
def test_faithfulness_scores_supported_share(fake_openai: FakeOpenAI, type_: str) -> None:
    route(fake_openai, extract={"claims": ["Paris is the capital of France.", "Paris has 9 million people.",
                                           "France is in Asia."]},
          verify=verdicts("supported", "unsupported", "contradicted"))
    result = evaluate(spec(type_), "...", {"context": CONTEXT, "query": "q"}, make_grader(fake_openai))
    assert result.score == pytest.approx(1 / 3)
    assert result.pass_ is False and result.threshold == 0.7
    assert steps_called(fake_openai) == ["extract", "verify"]
    assert "3 claims, 2 not supported by the context: 'Paris has 9 million people.' unsupported" in result.reason
    assert result.reason.endswith("0.33 < threshold 0.70")
    assert result.details["claims"][0]["chunks"] == [0] and result.details["claims"][2]["verdict"] == "contradicted"
    verify_request = next(b for b in fake_openai.requests if "<<<EVIDENCE 2>>>" in user_text(b))
    assert "Tokyo has great sushi." in user_text(verify_request)


def test_faithfulness_lenient_and_negation(fake_openai: FakeOpenAI) -> None:
    route(fake_openai, extract={"claims": ["a", "b"]}, verify=verdicts("supported", "unsupported"))
    result = evaluate(spec("faithfulness", config={"lenient": True}), "...", {"context": "ctx"},
                      make_grader(fake_openai))
    assert result.score == 1.0 and result.pass_
    negated = evaluate(spec("faithfulness", negate=True), "...", {"context": "ctx"}, make_grader(fake_openai))
    assert negated.score == 0.5 and negated.pass_ is True  # 0.5 < 0.7 fails, `not-` passes, score 1 - 0.5


def test_faithfulness_zero_claims_and_missing_context(fake_openai: FakeOpenAI) -> None:
    route(fake_openai, extract={"claims": []})
    result = evaluate(spec("faithfulness"), "Hi!", {"context": "ctx"}, make_grader(fake_openai))
    assert result.pass_ is True and result.score is None and "no factual claims" in result.reason
    missing = evaluate(spec("faithfulness"), "Hi!", {}, make_grader(fake_openai))
    assert missing.error is not None and "vars.context" in missing.error


def test_context_transform_reads_response_metadata(fake_openai: FakeOpenAI) -> None:
    route(fake_openai, extract={"claims": ["a"]}, verify=verdicts("supported"))
    s = spec("faithfulness", context_transform="context['metadata']['chunks']")
    result = evaluate(s, "...", {}, make_grader(fake_openai), metadata={"chunks": ["from the RAG app"]})
    assert result.score == 1.0
    assert "from the RAG app" in user_text(fake_openai.requests[-1])


def test_hallucination_is_lower_is_better(fake_openai: FakeOpenAI) -> None:
    route(fake_openai, extract={"claims": ["a", "b", "c", "d"]},
          verify=verdicts("supported", "supported", "supported", "contradicted"))
    result = evaluate(spec("hallucination"), "...", {"context": CONTEXT}, make_grader(fake_openai))
    assert result.score == 0.25 and result.pass_ is True
    assert result.reason == "4 claims, 1 hallucinated: 'd' contradicted (because 3): 0.25 <= threshold 0.30"
    negated = evaluate(spec("hallucination", negate=True), "...", {"context": CONTEXT}, make_grader(fake_openai))
    assert negated.score == 0.25 and negated.pass_ is False


# ---------------------------------------------------------------- context-relevance
ECLIPSE = {"chunks": [{"level": lv, "used": u, "reason": ""} for lv, u in
                      [("high", True), ("high", True), ("medium", False), ("none", False), ("high", False)]],
           "missing": []}


def test_context_relevance_mastra_example(fake_openai: FakeOpenAI) -> None:
    route(fake_openai, classify=ECLIPSE)
    vars = {"query": "What causes solar eclipses?", "context": ["c1", "c2", "c3", "c4", "c5"]}
    result = evaluate(spec("context-relevance"), "Solar eclipses happen when ...", vars, make_grader(fake_openai))
    assert result.score == pytest.approx(0.64)
    assert result.pass_ and len(fake_openai.requests) == 1
    assert "high but unused: chunk 5" in result.reason
    lenient = evaluate(spec("context-relevance", config={"penalties": {"unusedHighRelevanceContext": 0.05}}),
                       "Solar eclipses happen when ...", vars, make_grader(fake_openai))
    assert lenient.score == pytest.approx(0.69)


def test_context_relevance_missing_and_scale(fake_openai: FakeOpenAI) -> None:
    route(fake_openai, classify={"chunks": [{"level": "high", "used": True, "reason": ""}],
                                 "missing": ["the date", "the place"]})
    result = evaluate(spec("context-relevance", config={"scale": 10}, threshold=8), "a",
                      {"query": "q", "context": "c"}, make_grader(fake_openai))
    assert result.score == pytest.approx(7.0) and result.pass_ is False
    assert "2 missing" in result.reason


def test_context_relevance_needs_query_and_right_count(fake_openai: FakeOpenAI) -> None:
    route(fake_openai, classify=ECLIPSE)
    no_query = evaluate(spec("context-relevance"), "a", {"context": ["c"]}, make_grader(fake_openai))
    assert no_query.error is not None and "vars.query" in no_query.error
    wrong = evaluate(spec("context-relevance"), "a", {"query": "q", "context": ["c1", "c2"]},
                     make_grader(fake_openai))
    assert wrong.error is not None and "grader error" in wrong.error  # 5 judgements for 2 chunks


# ---------------------------------------------------------------- context-precision / -recall
def test_context_precision_and_recall(fake_openai: FakeOpenAI) -> None:
    route(fake_openai, extract={"claims": ["r1", "r2"]},
          attribute={"matrix": [[True, False, False, False], [False, False, True, False]]})
    vars = {"context": ["a", "b", "c", "d"]}
    precision = evaluate(spec("context-precision", value="reference"), "out", vars, make_grader(fake_openai))
    assert round(precision.score or 0, 2) == 0.83 and precision.pass_
    assert [c["useful"] for c in precision.details["chunks"]] == [True, False, True, False]
    recall = evaluate(spec("context-recall", value="reference"), "out", vars, make_grader(fake_openai))
    assert recall.score == 1.0 and recall.pass_


def test_context_recall_counts_unattributed_claims(fake_openai: FakeOpenAI) -> None:
    route(fake_openai, extract={"claims": ["r1", "r2"]}, attribute={"matrix": [[True], [False]]})
    result = evaluate(spec("context-recall", value="ref"), "out", {"context": "a"}, make_grader(fake_openai))
    assert result.score == 0.5 and not result.pass_ and "'r2'" in result.reason


def test_reference_without_claims_is_an_error(fake_openai: FakeOpenAI) -> None:
    route(fake_openai, extract={"claims": []})
    result = evaluate(spec("context-recall", value="ok"), "out", {"context": "a"}, make_grader(fake_openai))
    assert result.error is not None and "makes no factual claims" in result.error


# ---------------------------------------------------------------- noise-robustness
def test_noise_robustness_mastra_example(fake_openai: FakeOpenAI) -> None:
    dims = dict(zip(["content_accuracy", "completeness", "relevance", "consistency", "hallucination_resistance"],
                    ["minimal", "none", "minimal", "minimal", "none"], strict=True))
    route(fake_openai, judge={"dimensions": dims, "robustnessScore": 0.85, "majorIssues": [], "reason": "ok"})
    s = spec("noise-robustness", config={"baselineResponse": "base", "noisyQuery": "noisy q",
                                         "noiseType": "distractors"})
    result = evaluate(s, "answer", {"query": "q"}, make_grader(fake_openai))
    assert result.score == 0.85 and result.pass_
    text = user_text(fake_openai.requests[0])
    assert "<<<NOISY QUERY>>>" in text and "distractors" in text


# ---------------------------------------------------------------- bad arguments
@pytest.mark.parametrize("type_,kw,message", [
    ("faithfulness", {"config": {"lenient": "yes"}}, "lenient"),
    ("faithfulness", {"config": {"mode": "x"}}, "unknown config key"),
    ("faithfulness", {"context_transform": "output["}, "does not compile"),
    ("faithfulness", {"provider": 5}, "grader provider"),
    ("faithfulness", {"rubric_prompt": ["a", "b", "c"]}, "at most 2"),
    ("context-relevance", {"config": {"penalties": {"unused": 1}}}, "unknown penalty"),
    ("context-relevance", {"config": {"scale": -1}}, "config.scale must be a positive number"),
    ("context-recall", {}, "value is required"),
    ("noise-robustness", {"config": {"noisyQuery": "q"}}, "baselineResponse"),
    ("noise-robustness", {"config": {"noisyQuery": "q", "baselineResponse": "b", "noiseType": "x"}}, "noiseType"),
])
def test_bad_arguments(type_: str, kw: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        engine.build(spec(type_, **kw))
