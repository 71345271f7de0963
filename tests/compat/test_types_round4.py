"""The assertion types of round four (max-score, gleu, tool-call-f1, perplexity / perplexity-score from given
logProbs, webhook against a local server, and ruby where the binary is installed) give promptfoo 0.121.20's
verdicts and scores on the configs in tests/compat/types/: against its results recorded in
promptfoo_0.121.20.json, and live when promptfoo is installed (PROMPTFOO_BIN). Record again with `python -m tests.compat.test_types_round4 --record`.

Known differences, documented in docs/assertions.md: max-score's losing case keeps its other assertions' score
(promptfoo sets it to 0); a webhook that fails (HTTP 500) is an ERROR here, a fail in promptfoo (both: not a
pass, score 0)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from tests.compat.compare import promptfoo_bin
from tests.test_assertions_external import grade
from tests.webhookserver import WebhookServer

HERE = Path(__file__).resolve().parent / "types"
ROOT = HERE.parent.parent.parent
RECORDED = HERE / "promptfoo_0.121.20.json"
#: ruby.yaml needs the `ruby` binary on both sides: compared only where it is installed.
CONFIGS = ("offline.yaml", "maxscore.yaml", "webhook.yaml") + (("ruby.yaml",) if shutil.which("ruby") else ())
Verdicts = dict[str, tuple[bool, float | None]]  # "test,prompt" -> (pass, score)


def _config(name: str, work: Path, hook: str) -> Path:
    """The config copied into `work` (with its provider), the webhook URL filled in."""
    for f in HERE.iterdir():
        if f.suffix in (".js", ".yaml"):
            (work / f.name).write_text(f.read_text().replace("{{hook}}", hook))
    return work / name


def run_evalrun(config: Path) -> Verdicts:
    out = config.with_suffix(".er.json")
    subprocess.run([sys.executable, "-m", "evalrun", "eval", str(config), "-o", str(out), "--no-cache", "--no-table",
                    "--no-progress-bar", "--results-file", str(config.with_suffix(".jsonl"))], cwd=ROOT,
                   capture_output=True, text=True, timeout=300, check=False)
    return {f"{r['test_index']},{r['prompt_index']}": (bool(r["pass"]), r["score"])
            for r in json.loads(out.read_text())["results"]}


def run_promptfoo(binary: str, config: Path) -> Verdicts:
    out = config.with_suffix(".pf.json")
    env = dict(os.environ, PROMPTFOO_DISABLE_TELEMETRY="1", PROMPTFOO_DISABLE_UPDATE="1",
               PROMPTFOO_CONFIG_DIR=str(config.parent / "pf-home"), PROMPTFOO_DISABLE_SHARING="1")
    subprocess.run([binary, "eval", "-c", str(config), "-o", str(out), "--no-cache", "--no-table",
                    "--no-progress-bar", "--no-write"], env=env, cwd=config.parent, capture_output=True, text=True,
                   timeout=300, check=False)
    return {f"{r['testIdx']},{r['promptIdx']}": (bool(r["success"]), r.get("score"))
            for r in json.loads(out.read_text())["results"]["results"]}


def _both(run: Any) -> dict[str, Verdicts]:
    with tempfile.TemporaryDirectory() as tmp, WebhookServer(grade) as hook:
        return {name: run(_config(name, Path(tmp), hook.url)) for name in CONFIGS}


#: (config, "test,prompt") -> why evalrun's score differs from promptfoo's there (pass/fail always agree)
SCORE_DIFFERS = {("maxscore.yaml", k): "a max-score loser keeps its own score (promptfoo: 0)"
                 for k in ("0,0", "1,0", "1,1", "2,1")}


def _check(ours: dict[str, Verdicts], theirs: dict[str, Verdicts]) -> None:
    for name in CONFIGS:
        assert set(ours[name]) == set(theirs[name]), name
        for key, (passed, score) in theirs[name].items():
            mine = ours[name][key]
            assert mine[0] == passed, (name, key, mine, passed)
            if (name, key) not in SCORE_DIFFERS:
                assert mine[1] == pytest.approx(score), (name, key, mine, score)


def test_same_verdicts_and_scores_as_recorded_promptfoo() -> None:
    recorded = json.loads(RECORDED.read_text())
    assert sum(len(recorded[c]) for c in ("offline.yaml", "maxscore.yaml", "webhook.yaml")) == 25
    assert len(recorded["ruby.yaml"]) == 7
    _check(_both(run_evalrun), {k: {t: (p, s) for t, (p, s) in v.items()} for k, v in recorded.items()})


def test_same_verdicts_as_live_promptfoo() -> None:
    binary = promptfoo_bin()
    if binary is None:
        pytest.skip("node or promptfoo 0.121.20 not installed (set PROMPTFOO_BIN)")
    _check(_both(run_evalrun), _both(lambda c: run_promptfoo(binary, c)))


if __name__ == "__main__" and "--record" in sys.argv:
    found = promptfoo_bin()
    if found is None:
        sys.exit("promptfoo not found: set PROMPTFOO_BIN")
    RECORDED.write_text(json.dumps(_both(lambda c: run_promptfoo(found, c)), indent=1, sort_keys=True) + "\n")
