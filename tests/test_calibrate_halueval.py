"""`evalrun calibrate` on public labelled data: 100 HaluEval summarization rows (tests/fixtures/calibrate, MIT; see
its NOTICE.md), each a document with a faithful and a hallucinated summary, run through the engine with the builtin
grader; HaluEval's labels are the `human` column. Every figure is recomputed here with the grading benchmark's own
functions (benchmarks/grading/metrics.py); none is written down here, as the builtin grader changes. The README's
"Trust the grader" section and docs/calibrate.md show a run of this suite: its three commands are run again, and
what they print must still be what those pages show."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from benchmarks.grading import metrics
from evalrun.cli import main
from tests.test_calibrate_cli import check_figures

FIXTURE = Path(__file__).parent / "fixtures" / "calibrate" / "halueval_summarization_100.jsonl"


def _write_suite() -> None:
    """evalrun.yaml over tests.jsonl (each row's faithful summary `a`, its hallucinated one `b`, as
    docs/calibrate.md shows them), and HaluEval's labels as labels.jsonl, in the current folder."""
    rows = [json.loads(line) for line in FIXTURE.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 100
    with open("tests.jsonl", "w", encoding="utf-8") as tests, open("labels.jsonl", "w", encoding="utf-8") as labels:
        for r in rows:
            for kind, human in (("right", "pass"), ("hallucinated", "fail")):
                description = f"summary {r['row']} {'a' if kind == 'right' else 'b'}"
                tests.write(json.dumps({"description": description, "vars": {
                    "answer": r[f"{kind}_summary"], "context": r["document"]}}) + "\n")
                labels.write(json.dumps({"description": description, "assertion": "faithfulness",
                                         "human": human, "note": "HaluEval label"}) + "\n")
    Path("evalrun.yaml").write_text("prompts: ['{{answer}}']\nproviders: [echo]\n"
                                    "defaultTest: {assert: [{type: faithfulness}]}\ntests: file://tests.jsonl\n")


def test_halueval_labels_as_the_human_column(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    _write_suite()
    assert main(["eval", "evalrun.yaml", "--no-progress-bar", "--no-table", "--results-file", "r.jsonl"]) in (0, 100)
    records: list[dict[str, Any]] = [json.loads(line) for line in Path("r.jsonl").read_text().splitlines()]
    capsys.readouterr()
    assert main(["calibrate", "r.jsonl", "--labels", "labels.jsonl", "--json", "--seed", "11"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["unmatched"] == [] and data["labels_matched"] == 200
    [m] = data["metrics"]
    assert (m["n_human_pass"], m["n_human_fail"], m["enough_labels"]) == (100, 100, True)
    human = {r["id"]: r["description"].endswith(" a") for r in records}
    check_figures(m, records, human)
    # the benchmark's figure for the threshold calibrate suggests, on the same items
    scores = [r["assertions"][0]["score"] for r in records]
    labels = [human[r["id"]] for r in records]
    assert m["in_sample_balanced_accuracy"] == pytest.approx(
        metrics.balanced_accuracy([s >= m["suggested_threshold"] for s in scores], labels), abs=1e-4)


ROOT = Path(__file__).parent.parent


def _shown(page: str, section: str) -> list[str]:
    """The ```text blocks of a section of a markdown page, each as its lines."""
    text = (ROOT / page).read_text(encoding="utf-8")
    start = text.index(section)
    body = text[start:text.find("\n## ", start + 1)]
    return [block.split("```", 1)[0].splitlines() for block in body.split("```text\n")[1:]]


def test_the_readme_shows_a_real_run_of_the_three_commands(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    _write_suite()
    assert main(["eval", "evalrun.yaml", "--no-progress-bar", "--no-table"]) in (0, 100)
    figures, results = _shown("README.md", "## Trust the grader")
    capsys.readouterr()
    assert main(["calibrate", "--template", ".evalrun/last-run.jsonl", "-o", "labels.csv", "--sample", "60",
                 "--seed", "1"]) == 0  # the README's first command
    with open("labels.csv", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    for r in rows:  # HaluEval's labels stand in for the person
        r["human"] = "pass" if r["description"].endswith(" a") else "fail"
    with open("labels.csv", "w", encoding="utf-8", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    assert main(["calibrate", ".evalrun/last-run.jsonl", "--labels", "labels.csv", "-o", "calibration.json"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert figures[0] in out
    assert figures == out[out.index(figures[0]):][:len(figures)]
    docs = (ROOT / "docs" / "calibrate.md").read_text(encoding="utf-8")
    assert all(line in docs for line in figures)  # the workflow page shows the same run
    Path("evalrun.yaml").write_text(Path("evalrun.yaml").read_text().replace("{type: faithfulness}",
                                                                            "{type: faithfulness, threshold: calibrated}"))
    assert main(["eval", "evalrun.yaml", "--no-progress-bar", "--no-table"]) in (0, 100)
    [result] = results
    said = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("Results:"))
    assert said.rsplit(" in ", 1)[0] == result.rsplit(" in ", 1)[0]
