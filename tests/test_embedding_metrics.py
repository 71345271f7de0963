"""Embedding metrics (similar, similar:dot, similar:euclidean, answer-relevance) end to end: YAML suites run
against the fake server's /v1/embeddings (hashed bag-of-words vectors) and chat completions."""

from __future__ import annotations

import json
import math
import textwrap
from pathlib import Path
from typing import Any

import pytest

from evalrun.cli import main
from evalrun.grading.embeddings import CREDENTIAL_VARS, promptfoo_default
from evalrun.grading.scoring import verdicts as js
from tests.fakeserver import FakeOpenAI, bag_of_words
from tests.graderfakes import route


def _embedder(url: str) -> str:
    return f"{{id: 'openai:embedding:fake-embed', config: {{apiBaseUrl: '{url}', apiKey: sk-x}}}}"


def _run(tmp_path: Path, answer: str, asserts: str, capsys: pytest.CaptureFixture[str],
         extra: str = "") -> list[dict[str, Any]]:
    suite = tmp_path / "suite.yaml"
    suite.write_text(textwrap.dedent("""\
        prompts: ["{{answer}}"]
        providers: [echo]
        """) + extra + textwrap.dedent(f"""\
        tests:
          - vars: {{answer: "{answer}", query: "What is the capital of France?"}}
            assert:
        """) + textwrap.indent(textwrap.dedent(asserts), "      "))
    out = tmp_path / "out.json"
    main(["eval", str(suite), "--no-cache", "-o", str(out)])
    capsys.readouterr()
    return list(json.loads(out.read_text())["results"][0]["assertions"])


def test_vector_formulas() -> None:
    assert js.cosine([1, 0], [0, 1]) == 0.0 and js.cosine([1, 1], [2, 2]) == pytest.approx(1.0)
    assert js.cosine([0, 0], [1, 1]) == 0.0 and js.dot([1, 2], [3, 4]) == 11
    assert js.euclidean([0, 0], [3, 4]) == 5.0
    assert js.similar([0, 0], [3, 4], "euclidean", 5.0) == (True, 1 / 6, 5.0)
    assert js.similar([1, 0], [1, 1], "cosine", 0.75) == (False, pytest.approx(math.sqrt(0.5)),
                                                          pytest.approx(math.sqrt(0.5)))
    with pytest.raises(ValueError, match="different lengths"):
        js.cosine([1], [1, 2])


def test_similar_cosine_dot_euclidean_and_lists(tmp_path: Path, fake_openai: FakeOpenAI,
                                                capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
                                                ) -> None:
    monkeypatch.chdir(tmp_path)
    answer = "Paris is the capital of France"
    e = _embedder(fake_openai.url)
    results = _run(tmp_path, answer, f"""\
        - type: similar
          value: The capital of France is Paris
          provider: {{embedding: {e}}}
        - type: similar
          value: Bananas are yellow
          provider: {{embedding: {e}}}
        - type: not-similar
          value: Bananas are yellow
          provider: {{embedding: {e}}}
        - type: similar
          value: [Bananas are yellow, "Paris, capital of France"]
          provider: {{embedding: {e}}}
        - type: similar:dot
          value: Paris is the capital of France
          threshold: 6
          provider: {{embedding: {e}}}
        - type: similar:euclidean
          value: Paris is the capital of France
          threshold: 0.1
          provider: {{embedding: {e}}}
        """, capsys)
    same = js.cosine(bag_of_words(answer), bag_of_words("The capital of France is Paris"))
    assert results[0]["pass"] and results[0]["score"] == pytest.approx(same)
    assert not results[1]["pass"] and results[2]["pass"]
    assert results[3]["pass"] and "closest of 2 values" in results[3]["reason"]
    assert results[4]["pass"] and results[4]["score"] == pytest.approx(js.dot(bag_of_words(answer), bag_of_words(answer)))
    assert results[5]["pass"] and results[5]["score"] == 1.0  # distance 0
    assert len(fake_openai.embedding_requests) == 6  # one request per evaluation
    assert fake_openai.embedding_requests[3]["input"] == [answer, "Bananas are yellow", "Paris, capital of France"]


def _no_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EVALRUN_EMBEDDER", raising=False)
    for name in CREDENTIAL_VARS:
        monkeypatch.delenv(name, raising=False)


def test_similar_without_an_embedding_model_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    _no_credentials(monkeypatch)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-a")  # promptfoo would embed with OpenAI then, without its key
    monkeypatch.setattr("evalrun.grading.embeddings.offline_available", lambda: False)  # as without the offline model
    suite = tmp_path / "s.yaml"
    suite.write_text("prompts: ['{{q}}']\nproviders: [echo]\ntests:\n  - vars: {q: hi}\n    assert:\n"
                     "      - type: similar\n        value: hello\n")
    assert main(["validate", str(suite)]) == 2
    err = capsys.readouterr().err
    assert "similar needs an embedding model" in err and "s.yaml:6" in err and "EVALRUN_EMBEDDER" in err
    out = tmp_path / "o.json"
    assert main(["eval", str(suite), "-o", str(out)]) == 2  # one config error before any call
    err = capsys.readouterr().err
    assert "s.yaml:6" in err and "similar needs an embedding model" in err and not out.exists()


@pytest.mark.parametrize(("env", "expected"), [
    ({"OPENAI_API_KEY": "sk"}, ("openai:embedding:text-embedding-3-large", {})),
    ({"OPENAI_API_KEY": "sk", "AZURE_API_KEY": "az", "AZURE_DEPLOYMENT_NAME": "d",
      "AZURE_OPENAI_DEPLOYMENT_NAME": "d", "AZURE_API_HOST": "x.openai.azure.com"},
     ("openai:embedding:text-embedding-3-large", {})),
    ({"AZURE_API_KEY": "az", "AZURE_DEPLOYMENT_NAME": "chat", "AZURE_OPENAI_DEPLOYMENT_NAME": "chat",
      "AZURE_OPENAI_EMBEDDING_DEPLOYMENT_NAME": "emb", "AZURE_API_HOST": "x.openai.azure.com"},
     ("azure:embedding:emb", {"apiBaseUrl": "https://x.openai.azure.com", "apiKey": "az",
                              "apiVersion": "2024-12-01-preview"})),
    ({"AZURE_OPENAI_API_KEY": "az", "AZURE_DEPLOYMENT_NAME": "chat", "AZURE_OPENAI_DEPLOYMENT_NAME": "chat",
      "AZURE_OPENAI_BASE_URL": "http://127.0.0.1:9/"},
     ("azure:embedding:chat", {"apiBaseUrl": "http://127.0.0.1:9", "apiKey": "az",
                               "apiVersion": "2024-12-01-preview"})),
    ({"AZURE_API_KEY": "az", "AZURE_OPENAI_DEPLOYMENT_NAME": "chat"}, None),  # promptfoo needs both names
    ({"ANTHROPIC_API_KEY": "sk", "MISTRAL_API_KEY": "m"}, None),
    ({"MISTRAL_API_KEY": "m"}, ("mistral:embedding:mistral-embed", {})),
    ({"GEMINI_API_KEY": "g", "MISTRAL_API_KEY": "m"}, None),  # promptfoo: Vertex, which needs Google Cloud
    ({"GOOGLE_APPLICATION_CREDENTIALS": "/k.json"}, ("vertex:embedding:gemini-embedding-001", {})),
    ({}, None),
])
def test_promptfoo_default_embedder_by_credentials(env: dict[str, str], expected: Any) -> None:
    """promptfoo 0.121.20's getDefaultProviders: which embedding model the credentials in the environment select."""
    chosen = promptfoo_default(env)
    assert (chosen.id, chosen.config) == expected if expected else chosen is None


def test_similar_embeds_with_openai_when_its_key_is_set(tmp_path: Path, fake_openai: FakeOpenAI,
                                                        capsys: pytest.CaptureFixture[str],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """OPENAI_API_KEY set and nothing configured: promptfoo's default embedding model (before the offline one),
    through OPENAI_BASE_URL; validate and the run summary name it; the assertion's own provider still wins."""
    monkeypatch.chdir(tmp_path)
    _no_credentials(monkeypatch)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.url)
    monkeypatch.setenv("OPENAI_API_BASE", fake_openai.url)
    monkeypatch.setattr("evalrun.grading.embeddings.offline_available", lambda: True)  # the key wins over the offline model
    suite = tmp_path / "s.yaml"
    suite.write_text(textwrap.dedent("""\
        prompts: ['{{answer}}']
        providers: [echo]
        tests:
          - vars: {answer: Paris is the capital of France}
            assert:
              - type: similar
                value: Paris is the capital of France
              - type: not-similar
                value: Bananas are yellow
                provider: {embedding: 'openai:embedding:other-model'}
        """))
    assert main(["validate", str(suite)]) == 0
    out = capsys.readouterr().out
    assert "openai:embedding:text-embedding-3-large (embeddings: promptfoo's default embedding model: " \
           "OPENAI_API_KEY is set)" in out
    res = tmp_path / "o.json"
    assert main(["eval", str(suite), "--no-cache", "-o", str(res)]) == 0
    printed = capsys.readouterr().out
    assert "text-embedding-3-large (embeddings: promptfoo's default embedding model" in printed
    assert "openai:embedding:other-model (embeddings: assertion provider)" in printed
    first, second = json.loads(res.read_text())["results"][0]["assertions"]
    assert first["pass"] and first["details"]["embedder"] == "openai:embedding:text-embedding-3-large"
    assert second["pass"] and second["details"]["embedder"] == "openai:embedding:other-model"
    assert sorted(r["model"] for r in fake_openai.embedding_requests) == ["other-model", "text-embedding-3-large"]


def test_answer_relevance_questions_then_embeddings(tmp_path: Path, fake_openai: FakeOpenAI,
                                                    capsys: pytest.CaptureFixture[str],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    questions = ["What is the capital of France?", "Which city is France's capital?", "What is Paris?"]
    route(fake_openai, judge={"questions": questions})
    e = _embedder(fake_openai.url)
    grader = f"{{id: 'openai:chat:fake-model', config: {{apiBaseUrl: '{fake_openai.url}', apiKey: sk-x}}}}"
    results = _run(tmp_path, "Paris is the capital of France", f"""\
        - type: answer-relevance
          provider: {{text: {grader}, embedding: {e}}}
        """, capsys)
    q = bag_of_words("What is the capital of France?")
    expected = sum(js.cosine(q, bag_of_words(x)) for x in questions) / 3
    assert results[0]["score"] == pytest.approx(expected) and results[0]["pass"] == (expected >= 0.7)
    assert len(fake_openai.requests) == 1 and len(fake_openai.embedding_requests) == 1
    assert fake_openai.embedding_requests[0]["input"] == ["What is the capital of France?", *questions]


def test_offline_minilm_embedder(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """all-MiniLM-L6-v2 (int8 ONNX) on onnxruntime: part of the default install, so never skipped."""
    from evalrun.grading import embeddings

    assert embeddings.offline_available()
    food, *others = embeddings.offline_embed(["A man is eating food.", "A man is eating a piece of bread.",
                                              "A man is riding a horse.", "The new movie is awesome."]).tolist()
    assert len(food) == 384 and sum(v * v for v in food) == pytest.approx(1.0, abs=1e-5)
    bread, horse, movie = (js.cosine(food, v) for v in others)
    # sentence-transformers' float32 model gives 0.7553 and 0.2474 for these pairs; the int8 model is within 0.01
    assert bread == pytest.approx(0.7553, abs=0.01) and horse == pytest.approx(0.2474, abs=0.01)
    assert bread > 0.7 > 0.3 > horse > movie
    monkeypatch.chdir(tmp_path)
    _no_credentials(monkeypatch)  # else OPENAI_API_KEY selects OpenAI's embedding model, as in promptfoo
    results = _run(tmp_path, "A man is eating food.", """\
        - type: similar
          value: A man is eating a piece of bread.
          threshold: 0.7
        - type: not-similar
          value: The new movie is awesome.
        """, capsys)
    assert results[0]["pass"] and results[0]["details"]["embedder"] == "builtin:all-MiniLM-L6-v2"
    assert results[1]["pass"]
