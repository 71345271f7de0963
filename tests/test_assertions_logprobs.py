"""perplexity and perplexity-score: from a script provider's logProbs and an OpenAI reply's logprobs (the fake
server), no logprobs -> an ERROR naming the fix, not-, thresholds, bad arguments."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from evalrun.api import evaluate
from evalrun.assertions.logprobs import token_logprobs
from evalrun.run.store import read_records
from evalrun.types import Output
from tests.fakeserver import FakeOpenAI
from tests.test_assertions_helpers import bad, run

LP = [-0.1, -0.2, -0.3]   # mean -0.2: perplexity e^0.2 = 1.2214, score 1 / (1 + e^0.2) = 0.4502


def _out(logprobs: list[float] | None) -> Output:
    return Output(text="hi", raw={"output": "hi", "logProbs": logprobs} if logprobs is not None else {"output": "hi"})


def test_perplexity_threshold_pass_fail_and_not() -> None:
    r = run("perplexity", "hi", threshold=1.5, ctx_kw={"response": _out(LP)})
    assert r.pass_ and r.score == 1.0 and r.details["perplexity"] == pytest.approx(math.exp(0.2))
    r = run("perplexity", "hi", threshold=1.2, ctx_kw={"response": _out(LP)})
    assert not r.pass_ and r.score == 0.0 and "Perplexity 1.22 is greater than threshold 1.2" in r.reason
    assert run("not-perplexity", "hi", threshold=1.2, ctx_kw={"response": _out(LP)}).pass_
    assert run("perplexity", "hi", ctx_kw={"response": _out([-9.0])}).pass_   # no threshold: reports only


def test_perplexity_score_value_and_not() -> None:
    want = 1 / (1 + math.exp(0.2))
    r = run("perplexity-score", "hi", threshold=0.45, ctx_kw={"response": _out(LP)})
    assert r.pass_ and r.score == pytest.approx(want)
    r = run("perplexity-score", "hi", threshold=0.46, ctx_kw={"response": _out(LP)})
    assert not r.pass_ and "less than threshold 0.46" in r.reason
    r = run("not-perplexity-score", "hi", threshold=0.46, ctx_kw={"response": _out(LP)})
    assert r.pass_ and r.score == pytest.approx(1 - want)


@pytest.mark.parametrize("type_", ["perplexity", "perplexity-score"])
def test_no_logprobs_is_an_error_naming_the_fix(type_: str) -> None:
    r = run(type_, "hi", threshold=0.5, ctx_kw={"response": _out(None)})
    assert r.error and "returned none" in r.error and "logprobs: true" in r.error and not r.pass_
    r = run(f"not-{type_}", "hi", threshold=0.5, ctx_kw={"response": _out([])})
    assert r.error and not r.pass_          # never inverted into a pass


def test_bad_arguments() -> None:
    assert "takes no value" in bad("perplexity", "x").message
    assert "needs a threshold" in bad("not-perplexity-score").message
    assert "unknown config key" in bad("perplexity", config={"x": 1}).message


def test_token_logprobs_reads_openai_replies() -> None:
    raw = {"choices": [{"message": {"content": "a"}, "logprobs": {"content": [{"logprob": -1}, {"logprob": -2}]}}]}
    assert token_logprobs(raw) == [-1.0, -2.0]
    assert token_logprobs({"choices": [{"message": {"content": "a"}}]}) is None
    assert token_logprobs("text") is None


def test_perplexity_through_an_openai_compatible_provider(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    fake_openai.script({"content": "Paris", "logprobs": [-0.5, -0.5]}, {"content": "Paris"})
    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"""
prompts: ["{{{{q}}}}"]
providers: [{{id: "openai:chat:m", config: {{apiBaseUrl: "{fake_openai.url}", apiKey: k, logprobs: true}}}}]
tests:
  - vars: {{q: one}}
    assert: [{{type: perplexity-score, threshold: 0.3}}]
  - vars: {{q: two}}
    assert: [{{type: perplexity-score, threshold: 0.3}}]
""", encoding="utf-8")
    out = tmp_path / "r.jsonl"
    evaluate(str(cfg), results_file=out, use_cache=False, max_concurrency=1)
    recs = sorted((rec for _, rec in read_records(out) if rec.get("kind", "case") == "case" and "status" in rec),
                  key=lambda r: r["vars"]["q"])
    assert recs[0]["status"] == "pass" and recs[0]["score"] == pytest.approx(1 / (1 + math.exp(0.5)))
    assert recs[1]["status"] == "error" and "returned none" in recs[1]["error"]
    assert fake_openai.requests[0].get("logprobs") is True
