"""noise-sensitivity end to end through the LLM grader, litellm and the fake server (scripted replies)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from evalrun.assertions import engine
from evalrun.errors import ConfigError
from evalrun.types import AssertionSpec
from tests.fakeserver import FakeOpenAI
from tests.graderfakes import evaluate, make_grader, route, steps_called, user_text

OUTPUT = "Python is a high-level language. JavaScript is also popular."
TRUTH = ("Python is a high-level programming language known for its simplicity and readability.\n"
         "It supports multiple programming paradigms including procedural and object-oriented programming.")
CHUNKS = [
    {"text": "Python is a high-level programming language known for its simplicity and readability.",
     "relevant": True},
    {"text": "JavaScript is used for web development. Java requires compilation.", "relevant": False},
    {"text": "Python supports multiple programming paradigms including procedural and object-oriented.",
     "relevant": True},
    {"text": "Ruby was created by Yukihiro Matsumoto in 1995.", "relevant": False},
]
OUT_CLAIMS = ["Python is a high-level language.", "JavaScript is also popular."]
GT_CLAIMS = ["Python is a high-level programming language known for its simplicity and readability.",
             "Python supports multiple programming paradigms including procedural and object-oriented programming."]
ROWS = {OUT_CLAIMS[0]: [True, False, False, False], OUT_CLAIMS[1]: [False, True, False, False],
        GT_CLAIMS[0]: [True, False, False, False], GT_CLAIMS[1]: [False, False, True, False]}


def extract(body: dict[str, Any]) -> dict[str, Any]:
    return {"claims": OUT_CLAIMS if "JavaScript is also popular" in user_text(body) else GT_CLAIMS}


def attribute(body: dict[str, Any]) -> dict[str, Any]:
    text = user_text(body)
    claims = [c for c in ROWS if c in text.split("<<<CHUNK 0>>>")[0]]
    return {"matrix": [ROWS[c][: text.count("<<<END CHUNK")] for c in claims]}


VERIFY = {"verdicts": [{"verdict": "supported", "reason": "in the ground truth", "evidence": [0]},
                       {"verdict": "unsupported", "reason": "the ground truth does not mention JavaScript",
                        "evidence": []}]}


def seed_routes(fake: FakeOpenAI, verify: Any = VERIFY) -> None:
    route(fake, extract=extract, verify=verify, attribute=attribute)


def spec(**config: Any) -> AssertionSpec:
    negate = bool(config.pop("negate", False))
    return AssertionSpec(type="noise-sensitivity", value=TRUTH, config=config, negate=negate,
                         key_path="tests[0].assert[0]")


@pytest.mark.parametrize("mode,formula,expected", [
    ("relevant", "default", 0.5), ("irrelevant", "default", 0.5),
    ("relevant", "ragas", 0.0), ("irrelevant", "ragas", 0.5),
])
def test_seed_example_labelled_chunks(fake_openai: FakeOpenAI, mode: str, formula: str, expected: float) -> None:
    seed_routes(fake_openai)
    result = evaluate(spec(mode=mode, formula=formula, contextChunks=CHUNKS), OUTPUT, {"query": "Python?"},
                      make_grader(fake_openai))
    assert result.error is None, result.error
    assert result.score == expected
    assert result.pass_ is (expected <= 0.2)
    assert steps_called(fake_openai) == ["attribute", "extract", "verify"]  # 3 calls: labels need no GT claims
    claims = result.details["claims"]
    assert [c["correct"] for c in claims] == [True, False]
    assert [c["chunks"] for c in claims] == [[0], [1]]
    assert claims[1]["reason"] == "the ground truth does not mention JavaScript"
    assert result.details["relevance_source"] == "labels"
    assert result.grader == "openai:fake-model" and result.details["grader"] == "openai:fake-model"
    assert len(result.details["calls"]) == 3 and len(result.details["raw_replies"]) == 3


def test_seed_reason_names_the_offending_claim(fake_openai: FakeOpenAI) -> None:
    seed_routes(fake_openai)
    result = evaluate(spec(contextChunks=CHUNKS), OUTPUT, {}, make_grader(fake_openai))
    assert result.reason == ("2 claims, 1 incorrect ('JavaScript is also popular.', from irrelevant chunk 2): "
                             "0.50 > threshold 0.20")
    assert result.threshold == 0.2


def test_unlabelled_chunks_take_relevance_from_ground_truth_claims(fake_openai: FakeOpenAI) -> None:
    seed_routes(fake_openai)
    texts = [c["text"] for c in CHUNKS]
    result = evaluate(spec(mode="irrelevant"), OUTPUT, {"context": texts}, make_grader(fake_openai))
    assert result.score == 0.5
    assert steps_called(fake_openai) == ["attribute", "extract", "extract", "verify"]  # the 4-call budget
    assert result.details["chunk_relevance"] == [True, False, True, False]
    assert result.details["relevance_source"] == "ground-truth claims"
    assert [c["chunks"] for c in result.details["ground_truth_claims"]] == [[0], [2]]
    attribute_request = next(b for b in fake_openai.requests if "attribute" in json.dumps(b["response_format"]))
    schema = attribute_request["response_format"]["json_schema"]["schema"]["properties"]["matrix"]
    assert schema["minItems"] == schema["maxItems"] == 4
    assert schema["items"]["minItems"] == schema["items"]["maxItems"] == 4


def test_second_run_hits_the_cache(fake_openai: FakeOpenAI) -> None:
    seed_routes(fake_openai)
    grader = make_grader(fake_openai)
    first = evaluate(spec(contextChunks=CHUNKS), OUTPUT, {}, grader)
    n = len(fake_openai.requests)
    second = evaluate(spec(contextChunks=CHUNKS), OUTPUT, {}, grader)
    assert len(fake_openai.requests) == n == 3
    assert second.score == first.score == 0.5
    assert all(c["cached"] for c in second.details["calls"])


def test_not_keeps_the_score_and_flips_pass(fake_openai: FakeOpenAI) -> None:
    seed_routes(fake_openai)
    result = evaluate(spec(contextChunks=CHUNKS, negate=True), OUTPUT, {}, make_grader(fake_openai))
    assert result.type == "not-noise-sensitivity"
    assert result.pass_ is True and result.score == 0.5


def test_string_context_plus_noise_context(fake_openai: FakeOpenAI) -> None:
    route(fake_openai, extract={"claims": ["Paris is the capital of France.", "Rome is famous for pasta."]},
          verify={"verdicts": [{"verdict": "supported", "reason": "", "evidence": [0]},
                               {"verdict": "unsupported", "reason": "", "evidence": []}]},
          attribute={"matrix": [[True, False], [False, True]]})
    result = evaluate(spec(mode="irrelevant", noiseContext="Rome is famous for pasta."),
                      "Paris is the capital of France. Rome is famous for pasta.",
                      {"context": "Paris is the capital of France."}, make_grader(fake_openai))
    assert result.score == 0.5
    assert result.details["chunk_relevance"] == [True, False]
    assert len(fake_openai.requests) == 3


def test_wrong_verdict_count_is_a_grader_error_not_a_score(fake_openai: FakeOpenAI) -> None:
    short = {"verdicts": [{"verdict": "supported", "reason": "", "evidence": []}]}
    seed_routes(fake_openai, verify=short)
    result = evaluate(spec(contextChunks=CHUNKS, negate=True), OUTPUT, {}, make_grader(fake_openai))
    assert result.error is not None and "grader error" in result.error
    assert result.pass_ is False and result.score is None  # never inverted by not-
    assert json.loads(result.details["raw_replies"][0]) == short


def test_zero_claims_passes_without_a_score(fake_openai: FakeOpenAI) -> None:
    route(fake_openai, extract={"claims": []})
    result = evaluate(spec(contextChunks=CHUNKS), "Hello!", {}, make_grader(fake_openai))
    assert result.pass_ is True and result.score is None
    assert "no factual claims" in result.reason
    assert len(fake_openai.requests) == 1


def test_templated_chunks_are_checked_at_run_time(fake_openai: FakeOpenAI) -> None:
    route(fake_openai, extract={"claims": ["x"]})
    result = evaluate(spec(), OUTPUT, {"contextChunks": [{"text": "a", "relevant": "yes"}]},
                      make_grader(fake_openai))
    assert result.error is not None and "relevant must be true or false" in result.error


@pytest.mark.parametrize("config,value,message", [
    ({"mode": "noisy"}, TRUTH, "unknown mode"),
    ({"formula": "deepeval"}, TRUTH, "unknown formula"),
    ({"contextChunks": "{{chunks}}", "bogus": 1}, TRUTH, "unknown config key"),
    ({"contextChunks": [{"relevant": True}]}, TRUTH, "needs a string `text`"),
    ({"contextChunks": 5}, TRUTH, "must be a string or a list"),
    ({"noiseContext": ["a"]}, TRUTH, "noiseContext must be a string"),
    ({}, None, "value is required"),
    ({}, 42, "ground truth"),
])
def test_bad_arguments_are_config_errors(config: dict[str, Any], value: Any, message: str) -> None:
    s = AssertionSpec(type="noise-sensitivity", value=value, config=config, key_path="tests[0].assert[0]")
    with pytest.raises(ConfigError, match=message) as info:
        engine.build(s)
    assert "tests[0].assert[0]" in str(info.value)


def test_bad_rubric_prompt_step_is_config_error() -> None:
    s = AssertionSpec(type="noise-sensitivity", value=TRUTH, rubric_prompt={"classify": "x"})
    with pytest.raises(ConfigError, match="unknown grader step"):
        engine.build(s)


def test_independent_calls_run_concurrently(fake_openai: FakeOpenAI) -> None:
    """Both extractions, then verify and attribute, must be in flight together (a barrier of 2 each)."""
    import threading

    first, second = threading.Barrier(2, timeout=10), threading.Barrier(2, timeout=10)

    def together(barrier: threading.Barrier, answer: Any) -> Any:
        def handler(body: dict[str, Any]) -> Any:
            barrier.wait()  # raises BrokenBarrierError (-> HTTP error -> grader error) if calls were sequential
            return answer(body) if callable(answer) else answer
        return handler

    route(fake_openai, extract=together(first, extract), verify=together(second, VERIFY),
          attribute=together(second, attribute))
    result = evaluate(spec(), OUTPUT, {"context": [c["text"] for c in CHUNKS]}, make_grader(fake_openai))
    assert result.error is None and result.score == 0.5
    assert len(fake_openai.requests) == 4
