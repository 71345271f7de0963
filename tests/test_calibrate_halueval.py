"""`evalrun calibrate` on public labelled data: 100 HaluEval summarization rows (tests/fixtures/calibrate, MIT; see
its NOTICE.md), each a document with a faithful and a hallucinated summary, run through the engine with the builtin
grader; HaluEval's labels are the `human` column. Every figure is recomputed here with the grading benchmark's own
functions (benchmarks/grading/metrics.py); none is written down, as the builtin grader changes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchmarks.grading import metrics
from evalrun.cli import main
from tests.test_calibrate_cli import check_figures

FIXTURE = Path(__file__).parent / "fixtures" / "calibrate" / "halueval_summarization_100.jsonl"


def test_halueval_labels_as_the_human_column(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    rows = [json.loads(line) for line in FIXTURE.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 100
    with open("tests.jsonl", "w", encoding="utf-8") as tests, open("labels.jsonl", "w", encoding="utf-8") as labels:
        for r in rows:
            for kind, human in (("right", "pass"), ("hallucinated", "fail")):
                description = f"halueval summarization row {r['row']} {kind}"
                tests.write(json.dumps({"description": description, "vars": {
                    "answer": r[f"{kind}_summary"], "context": r["document"]}}) + "\n")
                labels.write(json.dumps({"description": description, "assertion": "faithfulness",
                                         "human": human, "note": "HaluEval label"}) + "\n")
    Path("evalrun.yaml").write_text("prompts: ['{{answer}}']\nproviders: [echo]\n"
                                    "defaultTest: {assert: [{type: faithfulness}]}\ntests: file://tests.jsonl\n")
    assert main(["eval", "evalrun.yaml", "--no-progress-bar", "--no-table", "--results-file", "r.jsonl"]) in (0, 100)
    records: list[dict[str, Any]] = [json.loads(line) for line in Path("r.jsonl").read_text().splitlines()]
    capsys.readouterr()
    assert main(["calibrate", "r.jsonl", "--labels", "labels.jsonl", "--json", "--seed", "11"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["unmatched"] == [] and data["labels_matched"] == 200
    [m] = data["metrics"]
    assert (m["n_human_pass"], m["n_human_fail"], m["enough_labels"]) == (100, 100, True)
    human = {r["id"]: r["description"].endswith("right") for r in records}
    check_figures(m, records, human)
    # the benchmark's figure for the threshold calibrate suggests, on the same items
    scores = [r["assertions"][0]["score"] for r in records]
    labels = [human[r["id"]] for r in records]
    assert m["in_sample_balanced_accuracy"] == pytest.approx(
        metrics.balanced_accuracy([s >= m["suggested_threshold"] for s in scores], labels), abs=1e-4)
