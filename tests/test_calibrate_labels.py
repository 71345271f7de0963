"""evalrun/calibration/labels.py: stratified sampling, matching rules, digests."""

from __future__ import annotations

from typing import Any

from evalrun.calibration import labels
from evalrun.calibration.labels import Label


def test_sample_takes_one_row_per_score_stratum_reproducibly() -> None:
    rows = [{"score": (i * 7 % 100) / 100, "n": i} for i in range(100)]
    picked = labels.sample(rows, 10, seed=5)
    assert len(picked) == 10 and labels.sample(rows, 10, seed=5) == picked
    assert sorted(int(r["score"] * 10) for r in picked) == list(range(10))  # one from each tenth of the scores
    assert labels.sample(rows, 10, seed=6) != picked
    assert labels.sample(rows, 500, seed=5) == rows and labels.sample(rows, None, seed=5) == rows


def _rec(rid: str, description: str, variables: dict[str, Any], provider: str = "echo") -> dict[str, Any]:
    return {"id": rid, "description": description, "vars": variables, "provider": provider, "prompt_label": "p",
            "assertions": [{"type": "faithfulness", "metric": None, "grader": "builtin", "score": 0.5, "pass": True}]}


def test_matching_by_id_then_description_and_reasons_for_the_rest() -> None:
    records = [_rec("a1", "one", {"x": 1}), _rec("b1", "two", {"x": 2}), _rec("b2", "two", {"x": 2}, "other")]
    found = labels.match([
        Label("f:2", True, "faithfulness", case="a1"),
        Label("f:3", True, "faithfulness", case="gone", description="one",
              vars_digest=labels.vars_digest({"x": 1})),
        Label("f:4", True, "faithfulness", description="two"),
        Label("f:5", True, "faithfulness", description="two", provider="other"),
        Label("f:6", True, "faithfulness", description="one", vars_digest=labels.vars_digest({"x": 9})),
        Label("f:7", True, "context-relevance", case="a1"),
    ], records)
    assert [(m.label.where, m.how if m.record is None or m.assertion is None else m.record["id"]) for m in found][:4] \
        == [("f:2", "a1"), ("f:3", "a1"), ("f:4", "2 cases have this description: give `case`, `vars_digest` "
                                          "(or `vars`), `provider` or `prompt`"), ("f:5", "b2")]
    assert "its vars changed" in found[4].how
    assert "no graded assertion 'context-relevance'" in found[5].how


def test_vars_digest_ignores_key_order_and_edge_whitespace_only() -> None:
    assert labels.vars_digest({"a": "x\n", "b": [1, " y"]}) == labels.vars_digest({"b": [1, "y"], "a": "x"})
    assert labels.vars_digest({"a": "x y"}) != labels.vars_digest({"a": "x  y"})


def test_a_test_without_description_is_found_again_by_its_vars() -> None:
    """Most suites leave `description` out: a label whose test moved (its id changed) is found by its vars digest."""
    records = [_rec("n1", "", {"x": 2}), _rec("n2", "", {"x": 1})]
    found = labels.match([
        Label("f:2", True, "faithfulness", case="old1", vars_digest=labels.vars_digest({"x": 1})),
        Label("f:3", True, "faithfulness", case="old3", vars_digest=labels.vars_digest({"x": 3})),
        Label("f:4", True, "faithfulness", case="old4"),
    ], records)
    assert found[0].record is not None and found[0].record["id"] == "n2" and found[0].how == "description"
    assert found[1].record is None and "no case without a description has these vars" in found[1].how
    assert found[2].record is None and "no `description` or `vars_digest` to find it by" in found[2].how


def test_why_a_case_has_no_assertion_to_label() -> None:
    twice = _rec("t1", "two", {})
    twice["assertions"] *= 2
    errored = _rec("e1", "err", {})
    errored["assertions"] = [{"type": "faithfulness", "metric": None, "grader": "builtin", "score": None,
                              "pass": False, "error": "GRADER ERROR: timeout"}]
    found = labels.match([Label("f:2", True, "faithfulness", case="t1"), Label("f:3", True, "faithfulness", case="e1"),
                          Label("f:4", True, "answer-relevance", case="e1")], [twice, errored])
    assert found[0].how == "2 graded assertions 'faithfulness' in case t1: give them distinct `metric:` names and " \
        "label each by its name"
    assert found[1].how == "'faithfulness' in case e1 has no score to compare: it errored in this run (GRADER " \
        "ERROR: timeout)"
    assert found[2].how == "no graded assertion 'answer-relevance' in case e1"
