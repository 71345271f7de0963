"""Every example under examples/ runs offline with the builtin grader: no errors, every case as designed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalrun.api import evaluate

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
SUITES = sorted(p for p in EXAMPLES.glob("*/evalrun.yaml") if "plugin" not in p.parent.name)


def test_every_example_folder_has_a_suite_and_a_readme() -> None:
    names = {p.parent.name for p in SUITES}
    assert {"getting-started", "noise-sensitivity", "faithfulness", "context-relevance", "rag-app"} <= names
    for suite in SUITES:
        assert (suite.parent / "README.md").is_file(), suite.parent


@pytest.mark.parametrize("suite", SUITES, ids=lambda p: p.parent.name)
def test_example_passes_offline_with_the_builtin_grader(suite: Path, tmp_path: Path) -> None:
    outcome = evaluate(suite, results_file=tmp_path / "r.jsonl", use_cache=False)
    s = outcome.summary
    records = [json.loads(line) for line in (tmp_path / "r.jsonl").read_text().splitlines() if line.strip()]
    failing = [(r.get("description"), r.get("error"), [a["reason"] for a in r["assertions"] if not a["pass"]])
               for r in records if not r["pass"]]
    assert s["errors"] == 0 and s["failed"] == 0, failing
    assert s["total"] == len(records) > 0
    graded = [a for r in records for a in r["assertions"] if a.get("grader")]
    if suite.parent.name != "getting-started":
        assert graded and all(a["grader"] == "builtin" for a in graded)


def test_noise_sensitivity_example_reproduces_the_seed_figures(tmp_path: Path) -> None:
    evaluate(EXAMPLES / "noise-sensitivity" / "evalrun.yaml", results_file=tmp_path / "r.jsonl",
             use_cache=False)
    records = [json.loads(line) for line in (tmp_path / "r.jsonl").read_text().splitlines() if line.strip()]
    seed = [r for r in records if (r.get("description") or "").startswith("seed example")]
    assert len(seed) == 2
    for r in seed:
        (a,) = r["assertions"]
        assert a["score"] == pytest.approx(0.5)
        claims = a["details"]["claims"]
        assert [c["correct"] for c in claims] == [True, False]
        assert claims[1]["chunks"] == [1]
