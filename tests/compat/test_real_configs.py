"""Real users' promptfoo configs (tests/compat/real_configs/, see SOURCE.md there) load in evalrun.

Every config loads (its graders included) except those in KNOWN_FAILS, each an intended strictness of evalrun
(docs/config.md, "Differences from promptfoo"). Configs that need no network (echo, Python and JavaScript
providers) run, with the case counts and passes promptfoo 0.121.20 gives; http-anchors-openrouter (an http grader)
runs against the fake server (`python tests/compat/measure_examples.py --real` compares all of them).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from evalrun.config import load
from evalrun.errors import ConfigError
from evalrun.expand import count_cases
from tests.fakeserver import FakeOpenAI

HERE = Path(__file__).parent / "real_configs"
CONFIGS = sorted(p.parent.name for p in HERE.glob("*/promptfooconfig.yaml"))

#: config -> the error evalrun stops at (an intended difference from promptfoo)
KNOWN_FAILS = {
    # a prompt whose `{{"a": 1}}` does not parse (closed on its line, so not sent as written): promptfoo errors
    # that prompt's cases and runs the others
    "folded-prompts-json-braces": "template syntax error",
}

#: configs that run TypeScript files (providers, prompt functions, assertions)
TYPESCRIPT = {"ts-dispatch-test-provider", "ts-review-prompt-provider"}

#: config -> (cases, passed), the same in promptfoo 0.121.20
RUNS = {
    "arabic-echo": (3, 3),
    "echo-chat-undefined-vars": (10, 4),
    "echo-markdown-var-files": (3, 2),
    "python-provider-russian": (5, 5),
}


def _no_typescript(folder: Path) -> bool:
    from evalrun.jsnode import node_flags

    return shutil.which("node") is None or node_flags(folder) is None


@pytest.mark.parametrize("name", CONFIGS)
def test_real_config_loads(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(HERE / name)
    for var in ("AZURE_DEPLOYMENT", "AZURE_API_HOST", "OPENAI_BASE_URL", "OPENROUTER_API_KEY"):
        monkeypatch.setenv(var, "x")
    if name in KNOWN_FAILS:
        with pytest.raises(ConfigError, match=KNOWN_FAILS[name]):
            load(["promptfooconfig.yaml"])
        return
    if "mjs" in name and shutil.which("node") is None:
        pytest.skip("node not installed")
    if name in TYPESCRIPT and _no_typescript(HERE / name):
        pytest.skip("TypeScript needs Node.js 22.6+ or the tsx package (a promptfoo install has it: NODE_PATH)")
    suite = load(["promptfooconfig.yaml"])
    assert count_cases(suite) > 0
    from evalrun.grading.select import GraderResolver

    GraderResolver(suite, None, None).check(suite.tests)  # every grader (an http one too) is usable


@pytest.mark.parametrize("name", sorted(RUNS))
def test_real_config_runs(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from evalrun.api import evaluate
    from evalrun.run.store import read_records

    monkeypatch.chdir(HERE / name)
    out = tmp_path / "r.jsonl"
    evaluate("promptfooconfig.yaml", results_file=out, use_cache=False)
    records = [rec for _, rec in read_records(out)]
    assert (len(records), sum(rec.get("status") == "pass" for rec in records)) == RUNS[name]


def test_http_grader_config_runs(fake_openai: FakeOpenAI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """http-anchors-openrouter: two `https:NAME` providers and an `https:NAME` grader, all through its templated
    url (here the fake server). The grader passes a response only when it recommends back-off, so the small
    model's sessions case fails on the rubric alone (its icontains passes)."""
    from evalrun.api import evaluate
    from evalrun.run.store import read_records

    answers = {"vendor/large-model": "Retry with back-off through the session pool, or ADD INDEX for vectors.",
               "vendor/small-model": "Just retry later."}

    def reply(body: dict[str, Any]) -> dict[str, Any]:
        if body["model"] != "vendor/grader":
            return {"content": answers[body["model"]]}
        ok = "back-off through the session pool" in body["messages"][0]["content"].split("RESPONSE:")[1]
        return {"content": json.dumps({"pass": ok, "score": float(ok), "reason": "checked"})}

    fake_openai.default = reply
    monkeypatch.setenv("OPENROUTER_API_BASE_URL", fake_openai.url)
    monkeypatch.setenv("OPENROUTER_API_KEY", "k")
    monkeypatch.chdir(HERE / "http-anchors-openrouter")
    out = tmp_path / "r.jsonl"
    evaluate("promptfooconfig.yaml", results_file=out, use_cache=False)
    got = {(rec["description"], rec["provider"]): rec["status"] for _, rec in read_records(out)}
    assert got == {("session retries", "Frontier · large"): "pass", ("session retries", "Laptop · small"): "fail",
                   ("vector index", "Frontier · large"): "pass", ("vector index", "Laptop · small"): "fail"}
    graded = [r for r in fake_openai.requests if r["model"] == "vendor/grader"]
    assert (len(fake_openai.requests), len(graded)) == (6, 2)  # 4 model calls, one llm-rubric call per session case
    assert fake_openai.headers[-1]["authorization"] == "Bearer k"
