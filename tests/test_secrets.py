"""Known secrets never leave evalrun: provider apiKeys from the config and *_API_KEY/*_TOKEN/*_SECRET
environment values are redacted from every report format, the results file and the console; providers with
different credentials never share an in-flight request."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from evalrun.cli import main
from evalrun.credentials import REDACTED, Scrubber, env_secrets
from tests.fakeserver import FakeOpenAI

CONFIG_KEY = "sk-config-secret-0123456789"
ENV_KEY = "sk-env-secret-abcdefghijkl"


def test_scrubber_redacts_strings_keys_and_fixes_non_finite_numbers() -> None:
    s = Scrubber(["sk-abcdefgh12345", "short"])
    rec = {"error": "Bearer sk-abcdefgh12345 rejected", "score": float("nan"), "w": float("inf"),
           "vars": {"sk-abcdefgh12345": ["x sk-abcdefgh12345"]}, "short": "short"}
    assert s.encoded(rec)[0] == {"error": f"Bearer {REDACTED} rejected", "score": None, "w": None,
                                 "vars": {REDACTED: [f"x {REDACTED}"]}, "short": "short"}


def test_env_secret_names() -> None:
    env = {"OPENAI_API_KEY": "a" * 10, "GITHUB_TOKEN": "b" * 10, "MY_SECRET": "c" * 10, "HOME": "/root",
           "TOKENIZERS_PARALLELISM": "false"}
    assert sorted(env_secrets(env)) == ["a" * 10, "b" * 10, "c" * 10]


def test_echoed_keys_are_redacted_from_every_output(tmp_path: Path, fake_openai: FakeOpenAI,
                                                    monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    monkeypatch.setenv("COLUMNS", "400")
    fake_openai.script({"status": 401, "echo_headers": True})
    (tmp_path / "t.csv").write_text("q,__expected\nhello,contains:{{ env.OPENAI_API_KEY }}\n")
    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"""prompts: ['{{{{q}}}}']
providers:
  - id: openai:chat:fake-model
    label: keyed
    config: {{apiBaseUrl: "{fake_openai.url}", apiKey: {CONFIG_KEY}, maxRetries: 0}}
  - echo
tests: file://t.csv
""")
    outs = [str(tmp_path / f"r{ext}") for ext in (".json", ".jsonl", ".csv", ".xml", ".html")]
    results = tmp_path / "run.jsonl"
    rc = main(["eval", str(cfg), "--no-progress-bar", "--no-cache", "--results-file", str(results),
               *sum((["-o", o] for o in outs), [])])
    assert rc == 100
    assert fake_openai.headers and CONFIG_KEY in fake_openai.headers[0].get("authorization", "")  # it was sent
    printed = capsys.readouterr()
    texts = {"stdout": printed.out, "stderr": printed.err, "results": results.read_text()}
    texts.update({o: Path(o).read_text() for o in outs})
    for name, text in texts.items():
        assert CONFIG_KEY not in text and ENV_KEY not in text, name
    assert REDACTED in texts["results"] and REDACTED in texts[outs[0]]


def test_providers_with_different_keys_never_share_a_request(fake_openai: FakeOpenAI) -> None:
    from evalrun.providers.litellm_ import LLMTransport

    fake_openai.default = lambda body: {"content": "ok", "delay": 0.3}

    async def both() -> None:
        t = LLMTransport(max_concurrency=4, use_cache=True)
        msgs = [{"role": "user", "content": "same"}]
        base = {"api_base": fake_openai.url, "max_retries": 0}
        try:
            await asyncio.gather(t.chat("openai/fake-model", msgs, {**base, "api_key": "sk-first-key-111"}),
                                 t.chat("openai/fake-model", msgs, {**base, "api_key": "sk-second-key-22"}))
        finally:
            await t.aclose()

    asyncio.run(both())
    sent = sorted(h.get("authorization", "") for h in fake_openai.headers)
    assert sent == ["Bearer sk-first-key-111", "Bearer sk-second-key-22"]
