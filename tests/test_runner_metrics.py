"""Named metrics and derivedMetrics reach the run summary, the console and the JSON report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalrun.api import evaluate
from evalrun.report import console

CONFIG = """
prompts: ["{{a}}"]
providers: [echo]
derivedMetrics:
  - name: f1
    value: "2 * precision * recall / (precision + recall)"
  - name: per_case
    value: "precision / __count"
tests:
  - vars: {a: "cat dog"}
    assert:
      - {type: contains, value: cat, metric: precision}
      - {type: contains, value: dog, metric: recall}
  - vars: {a: "cat"}
    assert:
      - {type: contains, value: cat, metric: precision}
      - {type: contains, value: dog, metric: recall, weight: 3}
"""


def test_named_and_derived_metrics_in_summary(tmp_path: Path) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text(CONFIG)
    out = tmp_path / "r.json"
    outcome = evaluate(cfg, results_file=tmp_path / "r.jsonl", outputs=[str(out)])
    s = outcome.summary
    # recall: case 1 scores 1 (weight 1), case 2 scores 0 (weight 3) -> weighted mean 0.25
    assert s["metrics"] == {"precision": 1.0, "recall": 0.25}
    # derived metrics use the weighted score totals (promptfoo): precision 2, recall 1
    assert s["derived_metrics"]["f1"] == pytest.approx(2 * 2 * 1 / 3, abs=1e-6)
    assert s["derived_metrics"]["per_case"] == pytest.approx(1.0)
    assert "Metrics: precision 1.00, recall 0.25, f1 1.33, per_case 1.00" in console.summary(outcome)
    assert json.loads(out.read_text())["summary"]["metrics"]["recall"] == 0.25


def test_bad_derived_metric_is_a_config_error(tmp_path: Path) -> None:
    from evalrun.errors import ConfigError

    cfg = tmp_path / "c.yaml"
    cfg.write_text(CONFIG.replace("precision / __count", "precision +* 2"))
    with pytest.raises(ConfigError) as e:
        evaluate(cfg, results_file=tmp_path / "r.jsonl")
    assert "derivedMetrics[1]" in str(e.value)


def test_bad_derived_metric_is_caught_by_validate(tmp_path: Path) -> None:
    from evalrun.cli import main

    cfg = tmp_path / "c.yaml"
    cfg.write_text(CONFIG.replace("precision / __count", "precision +* 2"))
    assert main(["validate", str(cfg)]) == 2
