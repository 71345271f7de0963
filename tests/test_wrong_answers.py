"""Wrong or missing answers from an OpenAI-compatible server: `content: null` is an ERROR ("empty reply"),
a truncated 200 reply is not an "HTTP 500", and no litellm traceback text reaches an error message."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from evalrun.cli import main
from evalrun.errors import ProviderError
from evalrun.providers.litellm_ import LLMTransport
from tests.fakeserver import FakeOpenAI


def _completion(message: dict) -> str:
    return json.dumps({"id": "x", "object": "chat.completion", "created": 1, "model": "m",
                       "choices": [{"index": 0, "message": {"role": "assistant", **message},
                                    "finish_reason": "stop"}]})


def _chat(server: FakeOpenAI) -> str:
    async def go() -> str:
        t = LLMTransport(use_cache=False)
        try:
            out = await t.chat("openai/m", [{"role": "user", "content": "q"}],
                               {"api_base": server.url, "api_key": "sk-test"})
            return out.text
        finally:
            await t.aclose()

    return asyncio.run(go())


@pytest.fixture(autouse=True)
def _one_attempt(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVALRUN_MAX_RETRIES", "1")


def test_null_content_is_an_empty_reply_error(fake_openai: FakeOpenAI) -> None:
    fake_openai.script({"raw": _completion({"content": None})})
    with pytest.raises(ProviderError) as e:
        _chat(fake_openai)
    assert "empty reply" in str(e.value)


def test_null_content_makes_the_case_an_error_not_a_pass(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    fake_openai.script({"raw": _completion({"content": None})})
    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"prompts: [q]\nproviders:\n  - id: openai:chat:m\n    config: {{apiBaseUrl: '{fake_openai.url}'}}\n"
                   "tests:\n  - assert: [{type: not-contains, value: forbidden}]\n")
    assert main(["eval", str(cfg), "--no-progress-bar", "--no-cache", "--results-file",
                 str(tmp_path / "r.jsonl")]) == 100
    rec = json.loads((tmp_path / "r.jsonl").read_text())
    assert rec["status"] == "error" and "empty reply" in rec["error"]


@pytest.mark.parametrize("cut", [83, 90, 120])
def test_truncated_reply_is_not_reported_as_http_500(cut: int, fake_openai: FakeOpenAI) -> None:
    fake_openai.script({"raw": _completion({"content": "hello there"})[:cut]})
    with pytest.raises(ProviderError) as e:
        _chat(fake_openai)
    assert "500" not in str(e.value) and "server error" not in str(e.value) and e.value.status is None


def test_content_parts_are_read_as_text_on_the_direct_path(fake_openai: FakeOpenAI) -> None:
    fake_openai.script({"raw": _completion({"content": [{"type": "text", "text": "hi"}]})})
    assert _chat(fake_openai) == "hi"  # evalrun reads content parts itself (providers/http_.py, DirectOpenAI)


def test_unreadable_reply_carries_no_traceback_text(fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVALRUN_LLM_TRANSPORT", "litellm")
    fake_openai.script({"raw": _completion({"content": [{"type": "text", "text": "hi"}]})})
    with pytest.raises(ProviderError) as e:  # litellm cannot build its response object from content parts
        _chat(fake_openai)
    assert "Traceback" not in str(e.value) and 'File "' not in str(e.value) and "500" not in str(e.value)
