"""Every score the Mastra evals reference (shared/seeds/mastra-evals-reference.md) publishes for a worked example,
reproduced through evalrun's assertion types, and `evalrun list` holding every type of the metric family.

Deterministic examples are reproduced from their inputs alone. The LLM-judged examples publish only the final
score of a real model (and a prose reason): there they are reproduced end to end from a judgement consistent with
that reason (scripted at the fake server), which checks Mastra's formula, scale and rounding, not the model.
context-relevance (1.0, 0.64, 0.69, 0.26) and context-precision (0.83) are in test_rag_metrics.py/test_scoring.py.
"""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

import pytest

from evalrun.assertions import engine
from evalrun.assertions.base import AssertionContext
from evalrun.cli import main
from evalrun.grading.scoring import verdicts as judge_scoring
from evalrun.types import AssertionResult, AssertionSpec, Output
from tests.fakeserver import FakeOpenAI
from tests.graderfakes import evaluate, make_case, make_grader, route

NO_REASON = {"generateReason": False}


def spec(type_: str, **kw: Any) -> AssertionSpec:
    return AssertionSpec(type=type_, key_path="tests[0].assert[0]", **kw)


def _calls(*names: str, text: str = "Let me check.") -> Output:
    calls = [{"id": f"c{i}", "type": "function", "function": {"name": n, "arguments": "{}"}}
             for i, n in enumerate(names)]
    return Output(text=text, raw={"choices": [{"message": {"role": "assistant", "content": text,
                                                           "tool_calls": calls}}]})


def _tool_run(config: dict[str, Any], response: Output, query: str = "What's the weather?",
              grader: Any = None) -> AssertionResult:
    s = spec("tool-call-accuracy", config=config)
    s = dataclasses.replace(s, handler=engine.build(s))
    ctx = AssertionContext(output=response.text or "", response=response, vars={"query": query}, prompt="",
                           case=make_case({}), value=None, config=dict(config), get_grader=lambda _s: grader)
    return asyncio.run(engine.evaluate(s, ctx))


# ---------------------------------------------------------------- tool-call accuracy, code variant
@pytest.mark.parametrize(("config", "called", "published"), [
    ({"expectedTool": "weather-tool"}, ("weather-tool",), 1),                               # correct tool
    ({"expectedTool": "weather-tool", "strictMode": True}, ("search-tool", "weather-tool"), 0),  # strict
    ({"expectedTool": "auth-tool", "expectedToolOrder": ["auth-tool", "fetch-tool"], "strictMode": True},
     ("auth-tool", "fetch-tool"), 1),                                                        # strict order
    ({"expectedTool": "auth-tool", "expectedToolOrder": ["auth-tool", "fetch-tool"], "strictMode": False},
     ("auth-tool", "log-tool", "fetch-tool"), 1),                                            # flexible order
    ({"expectedTool": "weather-tool", "strictMode": False}, ("search-tool",), 0),           # comparison: code
])
def test_tool_call_accuracy_code_examples(config: dict[str, Any], called: tuple[str, ...], published: int) -> None:
    r = _tool_run(config, _calls(*called))
    assert r.score == published and r.pass_ == bool(published)


# ---------------------------------------------------------------- tool-call accuracy, LLM variant
TOOLS = [{"name": "weather-tool", "description": "Get weather information"},
         {"name": "calendar-tool", "description": "Check calendar events"},
         {"name": "search-tool", "description": "Search the web"}]


def test_tool_call_accuracy_llm_examples(fake_openai: FakeOpenAI) -> None:
    grader = make_grader(fake_openai)
    config = {"judge": "llm", "availableTools": TOOLS, **NO_REASON}
    route(fake_openai, judge={"evaluations": [{"toolCalled": "weather-tool", "wasAppropriate": True,
                                               "reasoning": "a weather question"}], "missingTools": []})
    assert _tool_run(config, _calls("weather-tool"), "What's the weather like in New York?", grader).score == 1.0
    route(fake_openai, judge={"evaluations": [], "missingTools": []})  # asks for clarification, calls nothing
    vague = Output(text="I'd be happy to help! Could you please provide more details?")
    assert _tool_run(config, vague, "I need help with something", grader).score == 1.0


def test_tool_call_accuracy_llm_partial_scores_cannot_come_from_one_call() -> None:
    """The reference prints 0.5 and 0.3 for runs with a single search-tool call; Mastra's code scores
    appropriate calls / calls, which for one call is 0 or 1 (docs/metrics.md says so)."""
    assert {judge_scoring.tool_selection([ok], []) for ok in (True, False)} == {0.0, 1.0}


# ---------------------------------------------------------------- prompt-alignment
def _alignment(i: float, r: float, c: float, a: float) -> dict[str, Any]:
    return {"intentAlignment": {"score": i, "primaryIntent": "p", "isAddressed": True, "reasoning": "r"},
            "requirementsFulfillment": {"requirements": [], "overallScore": r},
            "completeness": {"score": c, "missingElements": [], "reasoning": "r"},
            "responseAppropriateness": {"score": a, "formatAlignment": a > 0.5, "toneAlignment": True,
                                        "reasoning": "r"},
            "overallAssessment": "o"}


@pytest.mark.parametrize(("query", "dims", "config", "published"), [
    # factorial with error handling: everything met, completeness slightly short
    ("Write a Python function to calculate factorial with error handling", (1, 1, 0.75, 1), {}, 0.95),
    # TypeScript benefits without the requested bullet points: requirements half met, format wrong
    ("List the benefits of TypeScript in bullet points", (1, 0.5, 1, 0), {}, 0.75),
    # a Python class without the validation, error handling and documentation asked for
    ("Create a Python class with validation, error handling and docs", (0.5, 0, 0.5, 0.5), {}, 0.35),
    # scale 10, evaluationMode both
    ("Explain recursion", (1, 0.75, 0.75, 0.75), {"scale": 10, "evaluationMode": "both"}, 8.5),
])
def test_prompt_alignment_examples(fake_openai: FakeOpenAI, query: str, dims: tuple[float, ...],
                                   config: dict[str, Any], published: float) -> None:
    route(fake_openai, judge=_alignment(*dims))
    r = evaluate(spec("prompt-alignment", config={**config, **NO_REASON}), "the response", {"query": query},
                 make_grader(fake_openai))
    assert r.score == published


# ---------------------------------------------------------------- noise-robustness (Mastra's noise sensitivity)
@pytest.mark.parametrize(("levels", "robustness", "issues", "published"), [
    (["none"] * 5, 1.0, [], 1.0),                                                   # resists misinformation
    (["none", "moderate", "moderate", "minimal", "none"], 0.65, [], 0.65),          # distracted
    (["severe", "moderate", "significant", "significant", "severe"], 0.4,
     ["accepted the false claim", "hallucinated benefits", "contradicts the baseline"], 0.1),  # compromised
])
def test_noise_robustness_examples(fake_openai: FakeOpenAI, levels: list[str], robustness: float,
                                   issues: list[str], published: float) -> None:
    dims = dict(zip(("content_accuracy", "completeness", "relevance", "consistency", "hallucination_resistance"),
                    levels, strict=True))
    route(fake_openai, judge={"dimensions": dims, "robustnessScore": robustness, "majorIssues": issues,
                              "reason": "r"})
    s = spec("noise-robustness", config={"baselineResponse": "base", "noisyQuery": "noisy"})
    r = evaluate(s, "the answer", {"query": "q"}, make_grader(fake_openai))
    assert r.score == published


# ---------------------------------------------------------------- the family in `evalrun list`
FAMILY = ("answer-relevancy answer-similarity bias completeness content-similarity keyword-coverage "
          "prompt-alignment textual-difference tone-consistency tool-call-accuracy toxicity "
          "similar similar:cosine similar:dot similar:euclidean answer-relevance factuality model-graded-closedqa "
          "g-eval select-best classifier context-recall context-relevance context-precision faithfulness "
          "hallucination noise-sensitivity noise-robustness llm-rubric").split()


def test_evalrun_list_shows_every_type_of_the_family(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list"]) == 0
    listed = {line[2:].split()[0] for line in capsys.readouterr().out.splitlines()
              if line[:2] in ("G ", "  ") and line[2:3].strip()}
    assert set(FAMILY) <= listed, sorted(set(FAMILY) - listed)
