"""promptfoo's own example configs (tests/compat/promptfoo_examples/, see SOURCE.md) load and run in evalrun.

Every config loads (`evalrun validate`'s loader) except those in KNOWN_FAILS, each with the reason. Configs
without graded assertions run against tests/fakeserver.py through OPENAI_BASE_URL (the fake server answers each
request with its last user message), with promptfoo's case counts (measured with promptfoo 0.121.20 against
the same fake server) and no ERROR case.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from evalrun.config import load
from evalrun.errors import ConfigError
from evalrun.expand import count_cases
from tests.fakeserver import FakeOpenAI

HERE = Path(__file__).parent / "promptfoo_examples"
CONFIGS = sorted(p.parent.name for p in HERE.glob("*/promptfooconfig.yaml"))

#: example -> the error it still stops at, and why
KNOWN_FAILS = {
    "transform-file": "unknown assertion type 'number' (promptfoo has none either: its case errors at run time)",
    "chat-messages-format": "prompt objects with `messages:` (promptfoo 0.121.20 rejects them too)",
}

#: example -> (cases, passed) in promptfoo 0.121.20 and evalrun, outputs being the last user message
RUNS = {
    "nunjucks-custom-filters": (4, 4),
    "simple-csv": (8, 0),
    "multiple-turn-conversation": (7, 7),
    "assistant-cli": (20, 20),
    "config-prompts-per-model": (48, 48),
    "csv-prompts": (15, 15),
    "javascript-assert-external": (4, 4),
    "jsonl-test-cases": (2, 2),
    "python-assert-external": (4, 0),
    "python-assert-inline": (2, 1),
    "simple-cli": (8, 8),
    "store-and-reuse-outputs": (3, 3),
    "errors-vs-failures": (3, 1),
    "dynamic-var": (1, 1),
    "config-transform-file": (1, 1),
    "eval-javascript-assert-params": (1, 1),
    "eval-summarization": (6, 4),
}
#: examples whose ERROR cases are intended (promptfoo errors them too)
ERRORS = {"errors-vs-failures": 1}


@pytest.mark.parametrize("name", CONFIGS)
def test_example_loads(name: str) -> None:
    path = str(HERE / name / "promptfooconfig.yaml")
    if name in KNOWN_FAILS:
        with pytest.raises(ConfigError):
            load([path])
        return
    suite = load([path])
    assert count_cases(suite) > 0


def _last_user(body: dict[str, Any]) -> dict[str, Any]:
    users = [m for m in body.get("messages", []) if m.get("role") == "user"]
    content = users[-1]["content"] if users else ""
    return {"content": content if isinstance(content, str) else str(content)}


@pytest.mark.parametrize("name", sorted(RUNS))
def test_example_runs_against_the_fake_server(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from evalrun.api import evaluate
    from evalrun.run.store import read_records

    with FakeOpenAI(default=_last_user) as server:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        monkeypatch.setenv("OPENAI_API_BASE", server.url)
        monkeypatch.chdir(HERE / name)
        out = tmp_path / "r.jsonl"
        evaluate("promptfooconfig.yaml", results_file=out, use_cache=False)
    records = [rec for _, rec in read_records(out)]
    errors = [rec.get("error") for rec in records if rec.get("status") == "error"]
    assert len(errors) == ERRORS.get(name, 0), errors[:3]
    assert (len(records), sum(rec.get("status") == "pass" for rec in records)) == RUNS[name]
