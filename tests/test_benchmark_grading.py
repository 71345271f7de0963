"""The grading benchmark's offline parts: the hand-written support-bot sets, the figures, the suite it runs."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from benchmarks.grading import metrics, run, supportbot


@pytest.mark.parametrize("which", ["dev", "heldout"])
def test_supportbot_file_has_the_promised_shape(which: str) -> None:
    recs = supportbot.records(which)
    assert Counter(r["type"] for r in recs) == {"rewording": 40, "flip": 40, "retrieval": 20}
    assert len({r["id"] for r in recs}) == len(recs)
    for r in recs:
        if r["type"] == "retrieval":
            assert r["kind"] == "context-relevance" and r["question"] and r["relevant"] and r["distractor"]
        else:
            assert r["kind"] == "faithfulness" and r["label"] is (r["type"] == "rewording")
            assert r["answer"] and r["context"] and r["answer"] not in r["context"]
    assert len({r["context_id"] for r in recs if r["kind"] == "faithfulness"}) == 20


def test_heldout_shares_no_context_or_answer_with_dev() -> None:
    dev, held = supportbot.records("dev"), supportbot.records("heldout")
    texts = {k: {r.get(k) for r in dev} - {None} for k in ("context", "answer", "question", "relevant")}
    for r in held:
        for k, seen in texts.items():
            assert r.get(k) not in seen, (r["id"], k)


def test_supportbot_items_expand_retrievals_into_a_pair() -> None:
    faith = list(supportbot.items("test", kind="faithfulness"))
    rel = list(supportbot.items("dev", kind="context-relevance", limit=3))
    assert len(faith) == 80 and sum(i["label"] for i in faith) == 40
    assert [i["label"] for i in rel] == [True, False] * 3
    assert all(i["answer"] == "" and i["kind"] == "context-relevance" for i in rel)
    with pytest.raises(ValueError):
        list(supportbot.items("train"))


def _record(passed: bool | None, score: float | None, error: str | None = None) -> dict:
    a = {"score": score, "error": error} if error else {"pass": passed, "score": score}
    return {"status": "error" if error else ("pass" if passed else "fail"), "assertions": [a]}


def test_figures_count_passes_per_label_and_leave_errors_out() -> None:
    items = [{"id": str(k), "kind": "faithfulness", "question": None, "context": "the cat sat", "answer": ans,
              "label": label, "type": "t"} for k, (ans, label) in enumerate(
                  [("the cat sat", True), ("a cat", True), ("dogs ran", False), ("x", False)])]
    records = [_record(True, 0.9), _record(True, None), _record(False, 0.2), _record(None, None, "boom")]
    f = run.figures(items, records)
    assert (f["positives"], f["negatives"], f["errors"], f["no_score"]) == (2, 1, 1, 1)
    assert (f["positives_passed"], f["negatives_passed"]) == (2, 0)
    assert f["auroc"] == 1.0 and f["balanced_accuracy"] == 1.0
    assert f["passed_by_type"] == {"t (+)": [2, 2], "t (-)": [0, 1]}
    assert f["error_samples"] == ["3: boom"]


def test_baseline_reads_the_query_for_relevance_and_the_answer_for_faithfulness() -> None:
    item = {"kind": "context-relevance", "question": "refund window", "answer": "", "context": "refund policy"}
    assert run.baseline(item) == 0.5
    assert run.baseline({**item, "kind": "faithfulness", "answer": "policy"}) == 1.0
    assert metrics.token_overlap("the", "anything") == 1.0  # no content words: nothing unsupported


def test_a_small_run_goes_through_the_engine(tmp_path) -> None:
    items = list(supportbot.items("dev", kind="faithfulness", limit=2))
    items += list(supportbot.items("dev", kind="context-relevance", limit=1))
    config = run.write_suite(items, tmp_path)
    tests = [json.loads(line) for line in (tmp_path / "tests.jsonl").read_text().splitlines()]
    assert [t["assert"][0]["type"] for t in tests] == [i["kind"] for i in items]
    assert "query" in tests[-1]["vars"] and json.loads(config.read_text())["providers"] == ["echo"]
    records, elapsed = run.run_items(items)
    assert len(records) == len(items) and elapsed > 0
    f = run.figures(items, records)
    assert f["errors"] == 0 and f["n"] == 4
