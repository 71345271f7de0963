"""A provider or grader with no API key is a config error before any call, naming the variable it reads; an
authentication error (401/403, the client's "Missing credentials") is never retried (issue 37)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import evalrun.retry
from evalrun.cli import main
from evalrun.errors import ProviderError
from evalrun.providers.ids import missing_key
from evalrun.providers.litellm_ import LLMTransport
from tests.fakeserver import FakeOpenAI

KEYS = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_BASE_URL", "OPENAI_API_HOST", "ANTHROPIC_API_KEY",
        "ANTHROPIC_BASE_URL", "GROQ_API_KEY")


@pytest.fixture
def no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in KEYS:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="module")
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as s:
        yield s


@pytest.mark.parametrize(("model", "params", "env", "missing"), [
    ("openai/gpt-4o-mini", {}, {}, ["OPENAI_API_KEY"]),
    ("anthropic/claude-3-5-haiku-latest", {}, {"OPENAI_API_KEY": "k"}, ["ANTHROPIC_API_KEY"]),
    ("openai/gpt-4o-mini", {}, {"OPENAI_API_KEY": "k"}, []),
    ("openai/gpt-4o-mini", {"api_key": "k"}, {}, []),
    ("openai/local-model", {"api_base": "http://127.0.0.1:8080/v1"}, {}, []),  # an OpenAI-compatible server
    ("openai/gpt-4o-mini", {}, {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}, []),
    ("ollama_chat/llama3", {}, {}, []),  # local, keyless
    ("hosted_vllm/m", {}, {}, []),  # no variable known: litellm's own error decides
    ("azure/dep", {}, {}, []),  # Azure AD tokens are another way in
    ("gpt-4o-mini", {}, {}, []),  # bare name: litellm infers the provider
])
def test_missing_key(model: str, params: dict[str, str], env: dict[str, str], missing: list[str]) -> None:
    assert missing_key(model, params, env) == missing


def _suite(tmp_path: Path, provider: str, assertion: str = "{type: contains, value: q}") -> str:
    cfg = tmp_path / "suite.yaml"
    cfg.write_text(f"prompts: ['Answer {{{{q}}}}']\nproviders:\n  - {provider}\n"
                   f"tests:\n  - vars: {{q: q}}\n    assert: [{assertion}]\n", encoding="utf-8")
    return str(cfg)


def test_provider_without_key_is_a_config_error_before_any_call(
        tmp_path: Path, no_keys: None, capsys: pytest.CaptureFixture[str]) -> None:
    started = time.monotonic()
    code = main(["eval", _suite(tmp_path, "openai:gpt-4o-mini"), "--no-history", "--no-progress-bar"])
    err = capsys.readouterr().err
    assert code == 2
    assert "suite.yaml:3" in err and "provider openai:gpt-4o-mini needs an API key and OPENAI_API_KEY is not set" \
        in err
    assert "Traceback" not in err and time.monotonic() - started < 10
    assert not (tmp_path / ".evalrun").exists() or not list((tmp_path / ".evalrun").rglob("*.jsonl"))


def test_an_api_key_that_is_not_a_string_is_a_config_error(tmp_path: Path, server: FakeOpenAI,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    provider = f"{{id: 'openai:chat:m', config: {{apiBaseUrl: '{server.url}', apiKey: [sk-a, sk-b]}}}}"
    started = time.monotonic()
    code = main(["eval", _suite(tmp_path, provider), "--no-history", "--no-progress-bar"])
    err = capsys.readouterr().err
    assert code == 2 and "suite.yaml:3" in err and "apiKey must be a string, got list" in err, err
    assert "Traceback" not in err and time.monotonic() - started < 10


def test_grader_without_key_is_a_usage_error(tmp_path: Path, no_keys: None,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    cfg = _suite(tmp_path, "echo", "{type: llm-rubric, value: is polite}")
    code = main(["eval", cfg, "--no-history", "--no-progress-bar", "--grader", "anthropic:messages:claude-x"])
    err = capsys.readouterr().err
    assert code == 2
    assert "--grader: the grader anthropic:messages:claude-x needs an API key and ANTHROPIC_API_KEY is not set" \
        in err


def test_local_endpoints_need_no_key(tmp_path: Path, no_keys: None, server: FakeOpenAI,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    server.reset()
    cfg = _suite(tmp_path, f"{{id: 'openai:chat:local', config: {{apiBaseUrl: '{server.url}'}}}}",
                 "{type: not-contains, value: zzzqqq}")
    assert main(["eval", cfg, "--no-history", "--no-progress-bar", "--no-cache"]) == 0
    assert len(server.requests) == 1


@pytest.mark.parametrize("reply", [
    {"status": 500, "body": {"error": {"message": "Missing credentials. Please pass an `api_key`."}}},
    {"status": 401, "body": {"error": {"message": "Incorrect API key provided"}}},
    {"status": 403, "body": {"error": {"message": "forbidden"}}},
])
def test_authentication_errors_are_not_retried(server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch,
                                               reply: dict[str, object]) -> None:
    monkeypatch.setattr(evalrun.retry, "BASE_DELAY", 0.01)
    monkeypatch.setenv("EVALRUN_MAX_RETRIES", "3")
    server.reset()
    server.script(reply, reply, reply)
    transport = LLMTransport(use_cache=False)
    with pytest.raises(ProviderError) as info:
        asyncio.run(transport.chat("openai/fake-model", [{"role": "user", "content": "x"}],
                                   {"api_base": server.url, "api_key": "sk-test"}))
    assert len(server.requests) == 1
    assert "gave up" not in str(info.value) and "OPENAI_API_KEY" in str(info.value)


def test_client_side_missing_credentials_is_not_retried(no_keys: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """litellm's OpenAI client refuses before sending (a 500 in litellm's classes): one attempt, not five."""
    monkeypatch.setattr(evalrun.retry, "BASE_DELAY", 0.01)
    monkeypatch.setenv("EVALRUN_MAX_RETRIES", "3")
    transport = LLMTransport(use_cache=False)
    with pytest.raises(ProviderError) as info:
        asyncio.run(transport.chat("openai/gpt-4o-mini", [{"role": "user", "content": "x"}], {}))
    assert "authentication failed" in str(info.value)
    assert transport.stats()["requests"] == 1


@pytest.mark.parametrize(("assertion", "variable"), [
    ("{type: moderation}", "OPENAI_API_KEY"),
    ("{type: not-moderation, value: [hate]}", "OPENAI_API_KEY"),
    ("{type: pi, value: Is it polite?}", "WITHPI_API_KEY"),
])
def test_a_hosted_assertion_without_its_key_is_a_config_error_before_any_call(
        tmp_path: Path, no_keys: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        assertion: str, variable: str) -> None:
    """moderation's and pi's hosted services, as a grader's: a missing key stops the run at the assertion's line,
    not as an ERROR in every case."""
    monkeypatch.delenv("WITHPI_API_KEY", raising=False)
    cfg = tmp_path / "suite.yaml"
    cfg.write_text("prompts: ['{{q}}']\nproviders: [echo]\ntests:\n  - vars: {q: hi}\n    assert:\n"
                   f"      - {{type: contains, value: hi}}\n      - {assertion}\n")
    assert main(["eval", str(cfg), "--no-history", "--no-progress-bar"]) == 2
    captured = capsys.readouterr()
    assert "suite.yaml:7" in captured.err and variable in captured.err and "Traceback" not in captured.err
    assert "Results:" not in captured.out  # nothing ran
    keyed = tmp_path / "keyed.yaml"  # a compatible server with its own key needs no variable
    keyed.write_text("prompts: ['']\nproviders: [echo]\ntests:\n  - assert:\n      - type: moderation\n"
                     "        provider: {id: 'openai:moderation:m', config: {apiKey: k}}\n")
    assert main(["eval", str(keyed), "--no-history", "--no-progress-bar"]) == 0  # empty output: nothing to moderate


def test_an_embedding_model_without_its_key_is_a_config_error_before_any_call(
        tmp_path: Path, no_keys: None, capsys: pytest.CaptureFixture[str]) -> None:
    """`similar` through a hosted embedding model with no key: stopped at the assertion's line before the run (it
    was an authentication ERROR in every case); `validate`, which calls nothing, still passes."""
    cfg = tmp_path / "suite.yaml"
    cfg.write_text("prompts: ['{{q}}']\nproviders: [echo]\ntests:\n  - vars: {q: hi}\n    assert:\n"
                   "      - type: similar\n        value: hello\n"
                   "        provider: openai:embedding:text-embedding-3-small\n")
    assert main(["eval", str(cfg), "--no-history", "--no-progress-bar"]) == 2
    captured = capsys.readouterr()
    assert "suite.yaml:6" in captured.err and "OPENAI_API_KEY is not set" in captured.err
    assert "Results:" not in captured.out
    assert main(["validate", str(cfg)]) == 0
