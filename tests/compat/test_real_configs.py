"""Real users' promptfoo configs (tests/compat/real_configs/, see SOURCE.md there) load in evalrun.

Every config loads except those in KNOWN_FAILS, each an intended strictness of evalrun (docs/config.md, "Differences
from promptfoo"). Configs that need no network (echo, Python and JavaScript providers) run, with the case counts
and passes promptfoo 0.121.20 gives (`python tests/compat/measure_examples.py --real` compares all of them).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from evalrun.config import load
from evalrun.errors import ConfigError
from evalrun.expand import count_cases

HERE = Path(__file__).parent / "real_configs"
CONFIGS = sorted(p.parent.name for p in HERE.glob("*/promptfooconfig.yaml"))

#: config -> the error evalrun stops at (an intended difference from promptfoo)
KNOWN_FAILS = {
    "handlebars-each-version-key": "template syntax error",  # Handlebars `{{#each}}`: promptfoo errors each case
    "nested-vars-transform-only": "undefined template variable",  # promptfoo renders it as empty text
    "http-anchors-openrouter": "unknown provider prefix 'https'",  # an http provider as grader
}

#: config -> (cases, passed), the same in promptfoo 0.121.20
RUNS = {
    "arabic-echo": (3, 3),
    "echo-markdown-var-files": (3, 2),
    "python-provider-russian": (5, 5),
}


@pytest.mark.parametrize("name", CONFIGS)
def test_real_config_loads(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(HERE / name)
    for var in ("AZURE_DEPLOYMENT", "AZURE_API_HOST", "OPENAI_BASE_URL", "OPENROUTER_API_KEY"):
        monkeypatch.setenv(var, "x")
    if name in KNOWN_FAILS:
        if name == "http-anchors-openrouter":  # the grader is checked when the run resolves it
            from evalrun.grading.select import GraderResolver

            suite = load(["promptfooconfig.yaml"])
            with pytest.raises(ConfigError, match=KNOWN_FAILS[name]):
                GraderResolver(suite, None, None).check(suite.tests)
            return
        with pytest.raises(ConfigError, match=KNOWN_FAILS[name]):
            load(["promptfooconfig.yaml"])
        return
    if "mjs" in name and shutil.which("node") is None:
        pytest.skip("node not installed")
    assert count_cases(load(["promptfooconfig.yaml"])) > 0


@pytest.mark.parametrize("name", sorted(RUNS))
def test_real_config_runs(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from evalrun.api import evaluate
    from evalrun.run.store import read_records

    monkeypatch.chdir(HERE / name)
    out = tmp_path / "r.jsonl"
    evaluate("promptfooconfig.yaml", results_file=out, use_cache=False)
    records = [rec for _, rec in read_records(out)]
    assert (len(records), sum(rec.get("status") == "pass" for rec in records)) == RUNS[name]
