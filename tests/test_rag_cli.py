"""`evalrun eval` with graded assertions through the CLI: grader selection, call budget, cache on a second run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalrun.cli import main
from tests import test_rag_noise as seed
from tests.fakeserver import FakeOpenAI


def write_config(tmp_path: Path, url: str, *, grader_key: bool) -> Path:
    grader = (f"grader:\n  id: openai:chat:fake-model\n  config: {{apiBaseUrl: '{url}', apiKey: sk-x}}\n"
              if grader_key else "")
    cfg = f"""
prompts: ["{{{{answer}}}}"]
providers: [echo]
{grader}tests:
  - description: seed
    vars:
      answer: "{seed.OUTPUT}"
      contextChunks: {json.dumps(seed.CHUNKS)}
    assert:
      - type: noise-sensitivity
        value: {json.dumps(seed.TRUTH)}
        config: {{mode: irrelevant, contextChunks: '{{{{contextChunks}}}}'}}
"""
    path = tmp_path / "evalrun.yaml"
    path.write_text(cfg)
    return path


def run(config: Path, out: Path, *extra: str, expect: int = 100) -> dict:
    code = main(["eval", str(config), "--no-progress-bar", "--no-table", "-o", str(out),
                 "--results-file", str(out.with_suffix(".jsonl")), *extra])
    assert code == expect
    return json.loads(out.read_text())


def test_config_grader_runs_the_seed_example_and_caches(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    seed.seed_routes(fake_openai)
    config = write_config(tmp_path, fake_openai.url, grader_key=True)
    first = run(config, tmp_path / "a.json")
    result = first["results"][0]["assertions"][0]
    assert result["score"] == 0.5 and result["pass"] is False and result["grader"] == "openai:chat:fake-model"
    assert result["reason"].startswith("2 claims, 1 incorrect ('JavaScript is also popular.', from irrelevant chunk 2)")
    assert len(result["details"]["raw_replies"]) == 3
    assert first["summary"]["graders"] == ["openai:chat:fake-model (LLM grader)"]
    assert len(fake_openai.requests) == 3
    second = run(config, tmp_path / "b.json")
    assert len(fake_openai.requests) == 3  # every grader request answered from the cache
    again = second["results"][0]["assertions"][0]
    assert again["score"] == 0.5 and all(c["cached"] for c in again["details"]["calls"])


def test_cli_grader_wins_over_env_and_config(fake_openai: FakeOpenAI, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """--grader sits below assertion/test providers but above EVALRUN_GRADER and the config's `grader:`."""
    seed.seed_routes(fake_openai)
    monkeypatch.setenv("EVALRUN_GRADER", "openai:chat:never-used")
    config = write_config(tmp_path, fake_openai.url, grader_key=True)
    out = run(config, tmp_path / "c.json", "--grader", "builtin")  # the builtin grader also flags the noise
    assert out["results"][0]["assertions"][0]["grader"] == "builtin"
    assert fake_openai.requests == []
