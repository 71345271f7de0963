"""LiteLLMProvider: prompt shapes, config normalisation, lazy litellm import."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from evalrun.errors import ConfigError, ProviderError
from evalrun.providers.base import CallContext
from evalrun.providers.litellm_ import LiteLLMProvider, LLMTransport
from evalrun.types import ProviderSpec
from tests.fakeserver import FakeOpenAI


@pytest.fixture(scope="module")
def _server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(default=lambda body: {"content": f"echo:{body['messages'][-1]['content']}"}) as server:
        yield server


@pytest.fixture
def fake_openai(_server: FakeOpenAI) -> Iterator[FakeOpenAI]:
    _server.reset()
    yield _server
    _server.reset()


def provider(server: FakeOpenAI, pid: str = "openai:chat:fake-model", **config: Any) -> LiteLLMProvider:
    spec = ProviderSpec(id=pid, label="fake", config={"apiBaseUrl": server.url, "apiKey": "sk-test", **config})
    return LiteLLMProvider(spec, LLMTransport())


def test_text_prompt_becomes_one_user_message(fake_openai: FakeOpenAI) -> None:
    p = provider(fake_openai, temperature=0.5, max_tokens=20)
    out = asyncio.run(p.call("What is 2+2?", CallContext()))
    assert out.text == "echo:What is 2+2?"
    body = fake_openai.requests[0]
    assert body["messages"] == [{"role": "user", "content": "What is 2+2?"}]
    assert body["model"] == "fake-model"
    assert body["temperature"] == 0.5 and body["max_tokens"] == 20
    assert (p.id, p.label, p.model) == ("openai:chat:fake-model", "fake", "openai/fake-model")


def test_chat_prompt_passes_through(fake_openai: FakeOpenAI) -> None:
    msgs = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]
    out = asyncio.run(provider(fake_openai).call(msgs, CallContext()))
    assert out.text == "echo:hi"
    assert fake_openai.requests[0]["messages"] == msgs


def test_api_key_envar_is_read(fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_FAKE_KEY", "sk-from-env")
    spec = ProviderSpec(id="openai/fake-model", config={"apiBaseUrl": fake_openai.url, "apiKeyEnvar": "MY_FAKE_KEY"})
    p = LiteLLMProvider(spec, LLMTransport())
    assert p.params["api_key"] == "sk-from-env"
    assert asyncio.run(p.call("x", CallContext())).text == "echo:x"


def test_missing_api_key_envar_is_a_config_error() -> None:
    spec = ProviderSpec(id="openai:gpt-4o-mini", config={"apiKeyEnvar": "EVALRUN_SURELY_UNSET_KEY"})
    with pytest.raises(ConfigError) as info:
        LiteLLMProvider(spec, LLMTransport())
    assert "EVALRUN_SURELY_UNSET_KEY" in str(info.value) and info.value.hint


def test_ctx_use_cache_false_calls_again(fake_openai: FakeOpenAI) -> None:
    p = provider(fake_openai)

    async def go() -> None:
        await p.call("same", CallContext())
        assert (await p.call("same", CallContext())).cached
        assert not (await p.call("same", CallContext(use_cache=False))).cached

    asyncio.run(go())
    assert len(fake_openai.requests) == 2


def test_local_server_without_api_key(fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    spec = ProviderSpec(id="openai:chat:fake-model", config={"apiBaseUrl": fake_openai.url})
    out = asyncio.run(LiteLLMProvider(spec, LLMTransport()).call("local", CallContext()))
    assert out.text == "echo:local"


def test_wrong_base_url_names_it(fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVALRUN_MAX_RETRIES", "1")
    spec = ProviderSpec(id="openai:chat:fake-model", config={"apiBaseUrl": "http://127.0.0.1:9/v1", "apiKey": "x"})
    with pytest.raises(ProviderError) as info:
        asyncio.run(LiteLLMProvider(spec, LLMTransport()).call("x", CallContext()))
    assert "could not connect to http://127.0.0.1:9/v1" in str(info.value)
    assert "apiBaseUrl" in str(info.value)


def test_bad_provider_id_is_a_config_error() -> None:
    with pytest.raises(ConfigError):
        LiteLLMProvider(ProviderSpec(id="openai:"), LLMTransport())


def test_importing_and_constructing_does_not_import_litellm() -> None:
    code = (
        "import sys\n"
        "from evalrun.providers.litellm_ import LLMTransport, LiteLLMProvider\n"
        "from evalrun.types import ProviderSpec\n"
        "t = LLMTransport()\n"
        "LiteLLMProvider(ProviderSpec(id='openai:gpt-4o-mini', config={'apiKey': 'k'}), t)\n"
        "import evalrun.cache, evalrun.retry, evalrun.providers.ids, evalrun.commands.runs\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('litellm', 'openai', 'httpx')))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_promptfoo_spellings_become_litellm_ones() -> None:
    from evalrun.providers import ids

    assert ids.to_litellm_model("openai:chat:x") == "openai/x"
    assert ids.normalise_params({"apiBaseUrl": "u"}) == {"api_base": "u"}
