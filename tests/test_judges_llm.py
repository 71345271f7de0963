"""Judge-style metrics end to end through the LLM grader and the fake server (scripted replies), and the
validate-time refusal of the builtin grader."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from evalrun.cli import main
from evalrun.types import AssertionSpec
from tests.fakeserver import FakeOpenAI
from tests.graderfakes import evaluate, make_grader, route, step_of, steps_called, user_text


def spec(type_: str, **kw: Any) -> AssertionSpec:
    negate = type_.startswith("not-")
    return AssertionSpec(type=type_.removeprefix("not-"), negate=negate, key_path="tests[0].assert[0]", **kw)


def _results(*labels: str) -> dict[str, Any]:
    return {"results": [{"result": lab, "reason": f"r{i}"} for i, lab in enumerate(labels)]}


WHY = {"reason": "The score is 0.8 because most statements answer the question."}


def test_answer_relevancy_three_calls_whatever_the_size(fake_openai: FakeOpenAI) -> None:
    statements = [f"statement {i}" for i in range(12)]
    route(fake_openai, extract={"statements": statements},
          judge=_results(*(["yes"] * 9 + ["unsure"] * 2 + ["no"])), reason=WHY)
    r = evaluate(spec("answer-relevancy"), "long answer", {"query": "What is X?"}, make_grader(fake_openai))
    assert r.score == pytest.approx(0.8) and r.pass_  # (9 + 0.3 * 2) / 12 = 0.8
    assert steps_called(fake_openai) == ["extract", "judge", "reason"]
    judge_prompt = user_text(fake_openai.requests[1])
    assert "What is X?" in judge_prompt and "<<<STATEMENT 11>>>" in judge_prompt
    # Mastra's generateReason: the grader explains the computed score; its text leads the reason line
    assert r.reason.startswith("The score is 0.8 because most statements answer the question. (12 statements")
    assert r.details["reason"] == WHY["reason"]
    why_prompt = user_text(fake_openai.requests[2])
    assert "The score is 0.8 on a scale from 0 to 1 (higher is better)" in why_prompt
    assert '"result": "unsure"' in why_prompt and "What is X?" in why_prompt
    assert [c["step"] for c in r.details["calls"]] == ["extract", "judge", "reason"]


def test_generate_reason_false_saves_the_call(fake_openai: FakeOpenAI) -> None:
    route(fake_openai, extract={"statements": ["a", "b"]}, judge=_results("yes", "no"))
    s = spec("answer-relevancy", config={"generateReason": False})
    r = evaluate(s, "o", {"query": "q"}, make_grader(fake_openai))
    assert r.score == 0.5 and r.pass_ and r.reason == "2 statements: 1 relevant, 0 unsure, 1 irrelevant: 0.50 >= " \
        "threshold 0.50" and "reason" not in r.details
    assert steps_called(fake_openai) == ["extract", "judge"]
    from evalrun.assertions import engine

    assert engine.build(s).grader_calls == 2 and engine.build(spec("answer-relevancy")).grader_calls == 3


def test_rubric_prompt_replaces_the_reason_prompt(fake_openai: FakeOpenAI) -> None:
    route(fake_openai, judge={"verdicts": [{"verdict": "no", "reason": "fine"}]}, reason=WHY)
    s = spec("toxicity", rubric_prompt={"reason": "Explain {{ score }} of {{ scale }} for {{ query }}."})
    r = evaluate(s, "hello", {"query": "hi"}, make_grader(fake_openai))
    assert r.score == 0.0 and r.pass_ and user_text(fake_openai.requests[-1]) == "Explain 0 of 1 for hi."


def test_a_failed_reason_call_is_an_error(fake_openai: FakeOpenAI) -> None:
    route(fake_openai, judge={"verdicts": [{"verdict": "no", "reason": "fine"}]})  # no reply for `reason`
    r = evaluate(spec("toxicity"), "hello", {"query": "hi"}, make_grader(fake_openai))
    assert r.error is not None and not r.pass_ and r.score is None


def test_answer_relevancy_scale_threshold_and_not(fake_openai: FakeOpenAI) -> None:
    route(fake_openai, extract={"statements": ["a", "b"]}, judge=_results("yes", "no"), reason=WHY)
    r = evaluate(spec("answer-relevancy", config={"scale": 10}, threshold=6), "o", {"query": "q"},
                 make_grader(fake_openai))
    assert r.score == 5.0 and not r.pass_ and "5.00 < threshold 6.00" in r.reason
    n = evaluate(spec("not-answer-relevancy", config={"scale": 10}, threshold=6), "o", {"query": "q"},
                 make_grader(fake_openai))
    assert n.pass_


def test_answer_relevancy_wrong_number_of_verdicts_is_an_error(fake_openai: FakeOpenAI) -> None:
    route(fake_openai, extract={"statements": ["a", "b"]}, judge=_results("yes"))
    r = evaluate(spec("answer-relevancy"), "o", {"query": "q"}, make_grader(fake_openai))
    assert r.error is not None and not r.pass_


def test_bias_is_lower_is_better(fake_openai: FakeOpenAI) -> None:
    route(fake_openai, extract={"opinions": ["o1", "o2", "o3"]}, judge=_results("yes", "no", "no"), reason=WHY)
    r = evaluate(spec("bias"), "out", {}, make_grader(fake_openai))
    assert r.score == 0.33 and r.pass_ and "1 of 3 opinions biased" in r.reason
    assert "(lower is better)" in user_text(fake_openai.requests[-1])
    route(fake_openai, extract={"opinions": ["o1"]}, judge=_results("yes"), reason=WHY)
    assert not evaluate(spec("bias"), "other out", {}, make_grader(fake_openai)).pass_
    route(fake_openai, extract={"opinions": []}, reason=WHY)
    n = len(fake_openai.requests)
    none = evaluate(spec("bias"), "neutral facts", {}, make_grader(fake_openai))
    assert none.score == 0.0 and none.pass_  # no opinion: no judge call, score 0
    assert sorted(step_of(b) for b in fake_openai.requests[n:]) == ["extract", "reason"]


def test_toxicity(fake_openai: FakeOpenAI) -> None:
    route(fake_openai, judge={"verdicts": [{"verdict": "yes", "reason": "insult"},
                                           {"verdict": "no", "reason": "fine"}]}, reason=WHY)
    r = evaluate(spec("toxicity", threshold=0.4), "you fool", {"query": "hi"}, make_grader(fake_openai))
    assert r.score == 0.5 and not r.pass_ and "insult" in r.reason
    assert steps_called(fake_openai) == ["judge", "reason"]


def test_factuality_categories_and_options(fake_openai: FakeOpenAI) -> None:
    route(fake_openai, judge={"category": "D", "reason": "says Lyon"})
    r = evaluate(spec("factuality", value="Paris"), "Lyon", {"query": "Capital of France?"},
                 make_grader(fake_openai))
    assert not r.pass_ and r.score == 0.0 and r.reason.startswith("(D) disagree")
    assert "<<<EXPERT ANSWER>>>\nParis" in user_text(fake_openai.requests[0])
    route(fake_openai, judge={"category": "A", "reason": "subset"})
    assert evaluate(spec("factuality", value="Paris, on the Seine"), "Paris", {}, make_grader(fake_openai)).pass_


def test_closedqa_and_geval(fake_openai: FakeOpenAI) -> None:
    route(fake_openai, judge={"reason": "it does", "answer": "Y"})
    assert evaluate(spec("model-graded-closedqa", value="is polite"), "Thanks!", {}, make_grader(fake_openai)).pass_
    route(fake_openai, steps={"steps": ["check A", "check B"]}, judge={"score": 6, "reason": "ok"})
    g = evaluate(spec("g-eval", value="coherent"), "text", {}, make_grader(fake_openai))
    assert g.score == pytest.approx(0.6) and not g.pass_  # default threshold 0.7
    assert "1. check A" in user_text(fake_openai.requests[-1])


def test_tool_call_accuracy_llm_variant(fake_openai: FakeOpenAI) -> None:
    route(fake_openai, judge={"evaluations": [{"toolCalled": "search-tool", "wasAppropriate": False,
                                               "reasoning": "weather-tool fits"}], "missingTools": ["weather-tool"]},
          reason={"reason": "The score is 0 because search-tool was used for a weather question."})
    raw = {"choices": [{"message": {"content": "Let me search.", "tool_calls": [
        {"id": "1", "type": "function", "function": {"name": "search-tool", "arguments": "{}"}}]}}]}
    from evalrun.assertions import engine
    from evalrun.assertions.base import AssertionContext
    from evalrun.types import Output
    from tests.graderfakes import make_case

    s = spec("tool-call-accuracy", config={"judge": "llm", "availableTools": [
        {"name": "weather-tool", "description": "weather"}, {"name": "search-tool", "description": "web"}]})
    import asyncio
    import dataclasses

    s = dataclasses.replace(s, handler=engine.build(s))
    grader = make_grader(fake_openai)
    ctx = AssertionContext(output="Let me search.", response=Output(text="Let me search.", raw=raw),
                           vars={"query": "Weather in Tokyo?"}, prompt="", case=make_case({}), value=None,
                           config=dict(s.config), get_grader=lambda _s: grader)
    r = asyncio.run(engine.evaluate(s, ctx))
    assert r.score == 0.0 and not r.pass_ and "missing: weather-tool" in r.reason
    assert r.reason.startswith("The score is 0 because search-tool")
    assert "Tools called, in order: search-tool" in user_text(fake_openai.requests[0])
    assert steps_called(fake_openai) == ["judge", "reason"]


def _suite(tmp_path: Path, asserts: str) -> Path:
    p = tmp_path / "suite.yaml"
    p.write_text(textwrap.dedent("""\
        prompts: ["{{query}}"]
        providers: [echo]
        tests:
          - vars: {query: "What is AI?"}
            assert:
        """) + textwrap.indent(textwrap.dedent(asserts), "      "))
    return p


@pytest.mark.parametrize("type_", ["answer-relevancy", "bias", "toxicity", "llm-rubric", "factuality",
                                   "g-eval", "model-graded-closedqa"])
def test_validate_refuses_the_builtin_grader_for_judge_metrics(tmp_path: Path, type_: str,
                                                               capsys: pytest.CaptureFixture[str],
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("OPENAI_API_KEY")  # with it, promptfoo's default grader would grade (as in promptfoo)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    value = "" if type_ in ("answer-relevancy", "bias", "toxicity") else "  value: x\n"
    path = _suite(tmp_path, f"- type: {type_}\n{value}")
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"the builtin grader cannot grade {type_}" in err and "suite.yaml:6" in err and "--grader" in err
    # eval stops the same way, before any call: one config error, no results
    assert main(["eval", str(path), "--no-cache", "-o", str(tmp_path / "r.json")]) == 2
    err = capsys.readouterr().err
    assert f"the builtin grader cannot grade {type_}" in err and "suite.yaml:6" in err
    assert not (tmp_path / "r.json").exists()


def test_validate_accepts_deterministic_scorers_and_an_llm_grader(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    path = _suite(tmp_path, "- type: keyword-coverage\n- type: bias\n  provider: openai:gpt-4o-mini\n")
    assert main(["validate", str(path), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["assertions_by_type"] == {"bias": 1, "keyword-coverage": 1}


def _alignment(intent: float, req: float, comp: float, appr: float) -> dict[str, Any]:
    return {"intentAlignment": {"score": intent, "primaryIntent": "list benefits", "isAddressed": True,
                                "reasoning": "r"},
            "requirementsFulfillment": {"requirements": [{"requirement": "bullets", "isFulfilled": False,
                                                          "reasoning": "prose"}], "overallScore": req},
            "completeness": {"score": comp, "missingElements": [], "reasoning": "r"},
            "responseAppropriateness": {"score": appr, "formatAlignment": False, "toneAlignment": True,
                                        "reasoning": "r"},
            "overallAssessment": "ok"}


def test_prompt_alignment_modes(fake_openai: FakeOpenAI) -> None:
    route(fake_openai, judge=_alignment(1.0, 0.5, 0.75, 0.5), reason=WHY)
    r = evaluate(spec("prompt-alignment"), "TypeScript provides static typing.",
                 {"query": "List the benefits of TypeScript in bullet points"}, make_grader(fake_openai))
    assert r.score == 0.75 and r.pass_  # 0.4 + 0.15 + 0.15 + 0.05
    assert "List the benefits of TypeScript" in user_text(fake_openai.requests[0])
    s = evaluate(spec("prompt-alignment", config={"evaluationMode": "system"}), "x", {"query": "q"},
                 make_grader(fake_openai))
    assert s.error is not None and "needs a system message" in s.error


def test_answer_similarity_three_calls(fake_openai: FakeOpenAI) -> None:
    route(fake_openai, extract={"outputUnits": ["Paris is the capital"], "groundTruthUnits": ["capital is Paris",
                                                                                              "on the Seine"]},
          judge={"matches": [{"groundTruthUnit": "capital is Paris", "outputUnit": "Paris is the capital",
                              "matchType": "semantic", "explanation": "same"},
                             {"groundTruthUnit": "on the Seine", "outputUnit": None, "matchType": "missing",
                              "explanation": "absent"}], "extraInOutput": [], "contradictions": []}, reason=WHY)
    r = evaluate(spec("answer-similarity", value="The capital is Paris, on the Seine."), "Paris is the capital",
                 {}, make_grader(fake_openai))
    assert r.score == 0.27 and not r.pass_  # (0.8 - 0.15) / 2.4 = 0.27
    assert steps_called(fake_openai) == ["extract", "judge", "reason"]
    assert "<<<GROUND TRUTH>>>\nThe capital is Paris" in user_text(fake_openai.requests[-1])


@pytest.mark.parametrize(("type_", "kw", "message"), [
    ("answer-similarity", {}, "a value is required"),
    ("prompt-alignment", {"config": {"evaluationMode": "agent"}}, "evaluationMode must be user, system or both"),
    ("bias", {"config": {"scale": -1}}, "config.scale must be a positive number"),
    ("answer-relevancy", {"config": {"uncertaintyWeight": "high"}}, "config.uncertaintyWeight must be a non-negative number"),
    ("toxicity", {"value": "x"}, "takes no value"),
    ("bias", {"config": {"generateReason": "no"}}, "config.generateReason must be true or false"),
    ("tool-call-accuracy", {"config": {"expectedTool": "a", "generateReason": False}}, "LLM variant only"),
    ("factuality", {}, "a value is required"),
    ("g-eval", {"value": ["a", "b"]}, "non-empty string"),
])
def test_bad_arguments(type_: str, kw: dict[str, Any], message: str) -> None:
    from evalrun.assertions import engine
    from evalrun.errors import ConfigError

    with pytest.raises(ConfigError, match=message):
        engine.build(spec(type_, **kw))
