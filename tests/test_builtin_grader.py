"""BuiltinGrader: the Grader protocol, the audit trail, and the seed noise-sensitivity example end to end."""

from __future__ import annotations

import asyncio
import json

import pytest

from evalrun.errors import GraderError
from evalrun.grading.builtin import BuiltinGrader, faithfulness
from evalrun.grading.scoring import claims as scoring
from evalrun.grading.steps import Grader
from evalrun.types import GraderTrace

OUTPUT = "Python is a high-level language. JavaScript is also popular."
GROUND_TRUTH = ("Python is a high-level programming language known for its simplicity and readability. "
                "It supports multiple programming paradigms including procedural and object-oriented programming.")
CHUNKS = [
    ("Python is a high-level programming language known for its simplicity and readability.", True),
    ("JavaScript is used for web development. Java requires compilation.", False),
    ("Python supports multiple programming paradigms including procedural and object-oriented.", True),
    ("Ruby was created by Yukihiro Matsumoto in 1995.", False),
]


def _trace() -> GraderTrace:
    return GraderTrace(grader="builtin")


def test_implements_the_grader_protocol() -> None:
    g = BuiltinGrader()
    assert isinstance(g, Grader)
    assert g.id == "builtin"
    assert g.description == "builtin (offline, with all-MiniLM-L6-v2)"


def test_seed_noise_sensitivity_example_end_to_end() -> None:
    g = BuiltinGrader()
    trace = _trace()

    async def run() -> tuple[list[str], list[str], list[list[bool]]]:
        claims = await g.extract_claims(OUTPUT, trace)
        verdicts = await g.verify(claims, [GROUND_TRUTH], trace)
        matrix = await g.attribute(claims, [c for c, _ in CHUNKS], trace)
        return claims, [v.verdict for v in verdicts], matrix

    claims, verdicts, matrix = asyncio.run(run())
    assert claims == ["Python is a high-level language.", "JavaScript is also popular."]
    assert verdicts == ["supported", "unsupported"]
    assert matrix == [[True, False, False, False], [False, True, False, False]]
    correct = [v == "supported" for v in verdicts]
    rel = [r for _, r in CHUNKS]
    assert scoring.noise_sensitivity(correct, matrix, rel, "relevant") == 0.5
    assert scoring.noise_sensitivity(correct, matrix, rel, "irrelevant") == 0.5
    assert scoring.noise_sensitivity(correct, matrix, rel, "relevant", "ragas") == 0.0
    assert [c.step for c in trace.calls] == ["extract", "verify", "attribute"]
    assert json.loads(trace.calls[0].raw or "") == {"claims": claims}
    assert json.loads(trace.calls[2].raw or "") == {"matrix": [[1, 0, 0, 0], [0, 1, 0, 0]]}
    raw_verdicts = json.loads(trace.calls[1].raw or "")["verdicts"]
    assert [v["verdict"] for v in raw_verdicts] == verdicts
    assert all(c.tokens.total == 0 and c.cost is None for c in trace.calls)


def test_verify_returns_one_verdict_per_claim_with_reasons_and_evidence() -> None:
    g = BuiltinGrader()
    claims = ["Ruby was created in 1995.", "Ruby was created in 1993.", "Ruby is used by banks."]
    verdicts = asyncio.run(g.verify(claims, [c for c, _ in CHUNKS], _trace()))
    assert [v.verdict for v in verdicts] == ["supported", "contradicted", "unsupported"]
    assert verdicts[0].evidence == (3,)
    assert "1993" in verdicts[1].reason and "1995" in verdicts[1].reason
    assert all(v.reason for v in verdicts)


def test_attribute_shape_with_no_claims_or_no_chunks() -> None:
    g = BuiltinGrader()
    assert asyncio.run(g.attribute([], ["a chunk"], _trace())) == []
    assert asyncio.run(g.attribute(["A claim about Rome."], [], _trace())) == [[]]


@pytest.fixture()
def lexical_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """The grader as installed without the semantic tier (no onnxruntime): levels from shared words."""
    monkeypatch.setattr("evalrun.grading.embeddings.offline_available", lambda: False)


def test_classify_chunks_levels_used_and_missing(lexical_only: None) -> None:
    g = BuiltinGrader()
    trace = _trace()
    query = "What are the main features of Python?"
    output = "Python is known for simplicity and readability."
    rel = asyncio.run(g.classify_chunks(query, output, [c for c, _ in CHUNKS], trace))
    levels = [c.level for c in rel.chunks]
    assert levels[1] == "none" and levels[3] == "none"
    assert levels[0] in ("medium", "high") and levels[2] in ("medium", "high")
    assert [c.used for c in rel.chunks] == [True, False, False, False]
    assert rel.missing == ("no context mentions 'main'", "no context mentions 'features'")
    assert trace.calls[-1].step == "classify"
    assert json.loads(trace.calls[-1].raw or "")["missing"] == list(rel.missing)


def test_classify_by_meaning_levels_used_and_missing() -> None:
    """The default (semantic) tier: the chunk about Python's features is relevant in other words too."""
    query = "What are the main features of Python?"
    output = "Python is known for simplicity and readability."
    rel = asyncio.run(BuiltinGrader().classify_chunks(query, output, [c for c, _ in CHUNKS], _trace()))
    assert [c.level for c in rel.chunks] == ["high", "none", "high", "none"]
    assert [c.used for c in rel.chunks] == [True, False, False, False]
    assert rel.missing == ()  # chunks answer it: nothing is missing


@pytest.mark.parametrize("tier", ["semantic", "lexical"])
def test_classify_topic_only_chunks_are_low_when_others_answer_the_focus(tier: str,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Mastra's Canberra example: one chunk answers, the others only name Australia or nothing."""
    if tier == "lexical":
        monkeypatch.setattr("evalrun.grading.embeddings.offline_available", lambda: False)
    chunks = ["The Great Barrier Reef is located in Australia.", "Coral reefs need warm water to survive.",
              "Many fish species live in coral reefs.", "Australia has six states and two territories.",
              "The capital of Australia is Canberra."]
    rel = asyncio.run(BuiltinGrader().classify_chunks(
        "What is the capital of Australia?", "The capital of Australia is Canberra.", chunks, _trace()))
    assert [c.level for c in rel.chunks] == ["low", "none", "none", "low", "high"]
    assert [c.used for c in rel.chunks] == [False, False, False, False, True]
    score = scoring.context_relevance([c.level for c in rel.chunks], [c.used for c in rel.chunks],
                                      len(rel.missing))
    assert score == pytest.approx(0.32)  # Mastra's docs (LLM grader): 0.26


def test_classify_high_relevance_and_no_chunks() -> None:
    g = BuiltinGrader()
    rel = asyncio.run(g.classify_chunks("When was the Eiffel Tower completed?", "In 1889.",
                                        ["The Eiffel Tower was completed in 1889."], _trace()))
    assert rel.chunks[0].level == "high" and rel.missing == ()
    empty = asyncio.run(g.classify_chunks("When was it built?", "In 1889.", [], _trace()))
    assert empty.chunks == () and empty.missing == ()


def test_judge_refuses_free_form_rubrics() -> None:
    g = BuiltinGrader()
    trace = _trace()
    with pytest.raises(GraderError, match="cannot perform the grader step 'judge' .*; set --grader MODEL"):
        asyncio.run(g.judge("Is the answer polite?", {"type": "object"}, trace))
    with pytest.raises(GraderError, match="cannot perform the grader step 'bias'"):
        asyncio.run(g.judge("...", {"type": "object"}, trace, step="bias"))
    assert [c.step for c in trace.calls] == ["judge", "bias"]


def test_supports_the_pipeline_steps_and_no_judge_step() -> None:
    from evalrun.assertions.model_graded import RUBRIC
    from evalrun.grading import steps

    g = BuiltinGrader()
    assert all(g.supports(s) for s in steps.PIPELINE.values())
    assert not g.supports(RUBRIC)


def test_faithfulness_helper() -> None:
    # the mean support score of the two claims: one supported (near 1), one not (near 0)
    assert 0.4 < faithfulness(OUTPUT, GROUND_TRUTH) < 0.6
    assert faithfulness("Python supports object-oriented programming.", GROUND_TRUTH) >= 0.7  # passes the default
    assert faithfulness("", GROUND_TRUTH) is None


def test_same_results_under_different_hash_seeds() -> None:
    """Deterministic on every machine: no dependence on set/dict ordering (PYTHONHASHSEED)."""
    import os
    import subprocess
    import sys

    code = ("from evalrun.grading.builtin import judge, extract_claims\n"
            "ctx = " + repr(GROUND_TRUTH + " " + " ".join(c for c, _ in CHUNKS)) + "\n"
            "for c in extract_claims(" + repr(OUTPUT + " Ruby was created in 1993 by Matz. Java is not "
                                              "compiled.") + "):\n"
            "    j = judge(c, [ctx]); print(j.verdict, j.score, j.reason)\n")
    outs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           env={**os.environ, "PYTHONHASHSEED": seed}).stdout for seed in ("1", "2", "3")}
    assert len(outs) == 1 and outs.pop().count("\n") == 4


@pytest.mark.parametrize("question", [None, "日本の首都は？"])
def test_cjk_sentence_against_itself_is_faithful(question: str | None) -> None:
    """A full CJK sentence against itself is supported, with or without a question."""
    text = "東京は日本の首都です。"
    assert faithfulness(text, text, question) == 1.0


def test_swapped_first_word_name_fails_faithfulness() -> None:
    assert faithfulness("Osaka is the capital of Japan.", "Tokyo is the capital of Japan.") < 0.5
    assert faithfulness("Киев — столица России.", "Москва — столица России.") < 0.5
