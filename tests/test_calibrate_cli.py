"""`evalrun calibrate` end to end: a real run (echo provider, builtin grader) -> a labels template -> filled labels
-> figures checked against an independent computation -> a calibration file -> a suite using `threshold:
calibrated`; labels after the suite is edited; bad label files; two graders side by side."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from benchmarks.grading import metrics
from evalrun.cli import main

N = 48


def _suite(folder: Path, n: int = N, *, assertion: str = "{type: faithfulness}", default: str = "") -> None:
    """n tests: even ones restate their context (a person passes them), odd ones change its year (fails them)."""
    lines = ["prompts: ['{{answer}}']", "providers: [echo]", default, "tests:"]
    for i in range(n):
        year, wrong = 1800 + i, 1800 + i + (7 if i % 3 else 0)
        good = i % 2 == 0
        answer = (f"Bridge {i} opened in {year} and carries trains." if good else
                  f"Bridge {i} opened in {wrong} and carries {'trains' if i % 4 == 1 else 'ships and cars'}.")
        lines += [f"  - description: bridge {i} {'faithful' if good else 'wrong'}",
                  f"    vars: {{answer: '{answer}', context: 'Bridge {i} opened in {year}. It carries trains "
                  f"across the river.'}}",
                  f"    assert: [{assertion}]" if assertion else ""]
    (folder / "evalrun.yaml").write_text("\n".join(line for line in lines if line) + "\n")


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _eval(results: str, *args: str) -> int:
    return main(["eval", "evalrun.yaml", "--no-progress-bar", "--no-table", "--results-file", results, *args])


def _calibrate(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    capsys.readouterr()
    assert main(["calibrate", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def _best(scores: list[float], labels: list[bool]) -> float:
    """The lowest threshold with the highest balanced accuracy, by brute force with the benchmark's metric."""
    u = sorted(set(scores))
    cands = [u[0] - 1.0, *[(a + b) / 2 for a, b in zip(u, u[1:], strict=False)], u[-1] + 1.0]
    bas = [metrics.balanced_accuracy([s >= t for s in scores], labels) for t in cands]
    # equal figures computed in another order can differ in the last bit (0.7875 / 0.7875000000000001): the first
    # within float noise of the best is the lowest of equal ones
    return next(t for t, ba in zip(cands, bas, strict=True) if ba >= max(bas) - 1e-12)


def _kappa(v: list[bool], h: list[bool]) -> float:
    n = len(v)
    chance = (v.count(True) * h.count(True) + v.count(False) * h.count(False)) / n ** 2
    return math.nan if chance == 1 else (sum(a == b for a, b in zip(v, h, strict=True)) / n - chance) / (1 - chance)


def _fail_share(of: list[bool], among: list[bool]) -> float:
    """Of the items failed in `among`, the share also failed in `of` (FAIL recall; FAIL precision swapped)."""
    both = [not a for a, b in zip(of, among, strict=True) if not b]
    return sum(both) / len(both) if both else math.nan


INTERVAL_OF = {  # each figure on a resample (verdicts, labels, scores), NaN where undefined
    "balanced_accuracy": lambda v, h, s: metrics.balanced_accuracy(v, h), "kappa": lambda v, h, s: _kappa(v, h),
    "precision_fail": lambda v, h, s: _fail_share(h, v), "recall_fail": lambda v, h, s: _fail_share(v, h),
    "auroc": lambda v, h, s: metrics.auroc(s, h)}


def check_intervals(m: dict[str, Any], items: dict[str, tuple[bool, bool, float]]) -> None:
    """Each `*_ci`: the 2.5th and 97.5th percentiles of the figure over 1,000 resamples of the items with
    replacement, drawn by numpy's seeded generator in calibrate's order (its folds list the items in it)."""
    order = [items[i] for i in m["cv"]["fold_of"]]
    rng = np.random.default_rng(m["cv"]["seed"])
    draws = [rng.integers(0, len(order), len(order)) for _ in range(1000)]
    for key, figure in INTERVAL_OF.items():
        values = [figure(*map(list, zip(*(order[i] for i in idx), strict=True))) for idx in draws]
        lo, hi = np.percentile([x for x in values if not math.isnan(x)], [2.5, 97.5])
        assert m[f"{key}_ci"] == pytest.approx([lo, hi], abs=1e-4), key


def check_text(out: str, m: dict[str, Any]) -> None:
    """The text report prints the JSON's figures, each with its interval."""
    def f(key: str) -> str:
        lo, hi = m[f"{key}_ci"]
        return f"{m[key]:.2f} [{lo:.2f}, {hi:.2f}]"

    c = m["confusion"]
    for line in (f"{m['metric']} graded by {m['grader']}: {m['n']} labels ({m['n_human_pass']} pass, "
                 f"{m['n_human_fail']} fail)",
                 f"human pass: grader pass {c['human_pass']['grader_pass']}, grader fail "
                 f"{c['human_pass']['grader_fail']} | human fail: grader pass {c['human_fail']['grader_pass']}, "
                 f"grader fail {c['human_fail']['grader_fail']}",
                 f"balanced accuracy {f('balanced_accuracy')}   Cohen's kappa {f('kappa')}",
                 f"FAIL precision {f('precision_fail')}   FAIL recall {f('recall_fail')}", f"AUROC {f('auroc')}",
                 f"suggested threshold {m['suggested_yaml_threshold']:.4g}: out-of-fold balanced accuracy "
                 f"{m['oof_balanced_accuracy']:.2f} ({m['cv']['folds']}-fold, seed {m['cv']['seed']})",
                 f"{len(m['disagreements'])} disagreement(s), worst first"):
        assert line in out


def check_figures(m: dict[str, Any], records: list[dict[str, Any]], human: dict[str, bool]) -> None:
    """Every figure of one metric of `calibrate --json`, recomputed from the results and the labels."""
    graded = {r["id"]: r["assertions"][0] for r in records if r["id"] in human}
    ids = list(graded)
    labels = [human[i] for i in ids]
    scores = [graded[i]["score"] for i in ids]
    verdicts = [graded[i]["pass"] for i in ids]
    assert m["n"] == len(ids)
    assert m["balanced_accuracy"] == pytest.approx(metrics.balanced_accuracy(verdicts, labels), abs=1e-4)
    assert m["auroc"] == pytest.approx(metrics.auroc(scores, labels), abs=1e-4)
    both_fail = sum(not v and not h for v, h in zip(verdicts, labels, strict=True))
    assert m["recall_fail"] == pytest.approx(both_fail / labels.count(False), abs=1e-4)
    assert m["precision_fail"] == pytest.approx(both_fail / verdicts.count(False), abs=1e-4)
    n = len(ids)
    observed = sum(v == h for v, h in zip(verdicts, labels, strict=True)) / n
    chance = (verdicts.count(True) * labels.count(True) + verdicts.count(False) * labels.count(False)) / n ** 2
    assert m["kappa"] == pytest.approx((observed - chance) / (1 - chance), abs=1e-4)
    assert m["confusion"] == {
        "human_pass": {"grader_pass": sum(v and h for v, h in zip(verdicts, labels, strict=True)),
                       "grader_fail": sum(h and not v for v, h in zip(verdicts, labels, strict=True))},
        "human_fail": {"grader_pass": sum(v and not h for v, h in zip(verdicts, labels, strict=True)),
                       "grader_fail": both_fail}}
    check_intervals(m, {i: (graded[i]["pass"], human[i], graded[i]["score"]) for i in ids})
    assert {d["case"] for d in m["disagreements"]} == {i for i in ids if graded[i]["pass"] != human[i]}  # all
    fold_of, fold_thr = m["cv"]["fold_of"], m["cv"]["fold_thresholds"]
    for k, thr in enumerate(fold_thr):  # each fold's threshold is the best on the other folds' labels
        train = [i for i in ids if fold_of[i] != k]
        assert thr == pytest.approx(_best([graded[i]["score"] for i in train], [human[i] for i in train]), abs=1e-5)
    oof = [graded[i]["score"] >= fold_thr[fold_of[i]] for i in ids]
    assert m["oof_balanced_accuracy"] == pytest.approx(metrics.balanced_accuracy(oof, labels), abs=1e-4)
    assert m["suggested_threshold"] == pytest.approx(_best(scores, labels), abs=1e-5)


def test_template_labels_calibrate_and_use_the_threshold(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _suite(folder)
    _eval("r1.jsonl")
    records = _records(folder / "r1.jsonl")
    capsys.readouterr()
    assert main(["calibrate", "--template", "r1.jsonl", "-o", "labels.csv", "--sample", "40", "--seed", "3"]) == 0
    assert "Wrote 40 rows (sampled by score from 48, seed 3)" in capsys.readouterr().out
    rows = list(csv.DictReader((folder / "labels.csv").open()))
    assert len(rows) == 40 and all(r["human"] == "" for r in rows)
    assert {"case", "description", "assertion", "score", "verdict", "claims", "evidence", "output"} <= set(rows[0])
    by_id = {r["id"]: r for r in records}
    assert all(float(r["score"]) == pytest.approx(by_id[r["case"]]["assertions"][0]["score"], abs=1e-4)
               for r in rows)
    for r in rows:  # the person's judgement
        r["human"] = "pass" if "faithful" in r["description"] else "fail"
    with (folder / "labels.csv").open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    human = {r["case"]: r["human"] == "pass" for r in rows}

    data = _calibrate(capsys, "r1.jsonl", "--labels", "labels.csv", "--min-labels", "10", "-o", "calibration.json",
                      "-o", "page.html")
    [m] = data["metrics"]
    assert (m["metric"], m["grader"], data["unmatched"]) == ("faithfulness", "builtin", [])
    check_figures(m, records, human)
    assert m["n_human_pass"] + m["n_human_fail"] == 40
    capsys.readouterr()
    assert main(["calibrate", "r1.jsonl", "--labels", "labels.csv", "--min-labels", "10"]) == 0
    check_text(capsys.readouterr().out, m)
    page = (folder / "page.html").read_text()
    assert "faithfulness" in page and f"{m['oof_balanced_accuracy']:.2f}" in page
    assert CSP in page[:1000] and "<script" not in page  # a static page holds the view's line: no script runs
    cal = json.loads((folder / "calibration.json").read_text())
    [entry] = cal["metrics"]
    assert entry["threshold"] == m["suggested_yaml_threshold"] == m["suggested_threshold"]
    assert entry["grader"]["id"] == "builtin" and entry["grader"]["model_hash"]
    assert cal["labels"]["sha256"] == data["labels"]["sha256"]

    _suite(folder, assertion="", default="defaultTest: {assert: [{type: faithfulness, threshold: calibrated}]}")
    capsys.readouterr()
    assert main(["validate", "evalrun.yaml"]) == 0
    assert f"faithfulness: {entry['threshold']:.4g} from calibration.json" in capsys.readouterr().out
    _eval("r2.jsonl")
    for r in _records(folder / "r2.jsonl"):
        a = r["assertions"][0]
        assert a["threshold"] == entry["threshold"] and a["pass"] == (a["score"] >= entry["threshold"])
    capsys.readouterr()
    _eval("r3.jsonl", "--grader", "openai:gpt-4o-mini", "--dry-run")
    err = capsys.readouterr().err
    assert "calibrated (calibration.json) with grader builtin" in err and "grades with openai:gpt-4o-mini" in err


def test_calibration_errors_name_the_key(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _suite(folder, 4, assertion="{type: faithfulness, threshold: calibrated}")
    assert main(["validate", "evalrun.yaml"]) == 2
    err = capsys.readouterr().err
    assert "evalrun.yaml:" in err and "threshold" in err and "calibration.json" in err
    (folder / "calibration.json").write_text(json.dumps({"kind": "evalrun-calibration", "format": 1, "metrics": [
        {"metric": "faithfulness", "threshold": None, "note": "too few labels to measure: 3 pass and 1 fail"}]}))
    assert main(["validate", "evalrun.yaml"]) == 2
    assert "too few labels" in capsys.readouterr().err
    _suite(folder, 4, assertion="{type: faithfulness, threshold: 0.5, calibration: 'file://calibration.json'}")
    assert main(["validate", "evalrun.yaml"]) == 2
    assert "both given" in capsys.readouterr().err


def test_labels_survive_suite_edits(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _suite(folder, 6)
    _eval("before.jsonl")
    capsys.readouterr()
    assert main(["calibrate", "--template", "before.jsonl", "-o", "labels.jsonl"]) == 0
    rows = [json.loads(line) for line in (folder / "labels.jsonl").read_text().splitlines()]
    for r in rows:
        r["human"] = "pass" if "faithful" in r["description"] else "fail"
    (folder / "labels.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    text = (folder / "evalrun.yaml").read_text()
    tests = text.split("  - description: ")
    head, items = tests[0], tests[1:]
    items[0], items[1] = items[1], items[0]  # bridge 0 and 1 swap places: their case ids change
    items[2] = items[2].replace("opened in 1802.", "opened in 1902.")  # bridge 2's context changes
    del items[5]  # bridge 5 is removed
    (folder / "evalrun.yaml").write_text(head + "".join("  - description: " + t for t in items))
    _eval("after.jsonl")
    data = _calibrate(capsys, "after.jsonl", "--labels", "labels.jsonl", "--min-labels", "2")
    why = {u["description"]: u["why"] for u in data["unmatched"]}
    assert set(why) == {"bridge 2 faithful", "bridge 5 wrong"}
    assert "vars changed" in why["bridge 2 faithful"] and "no test has this description" in why["bridge 5 wrong"]
    [m] = data["metrics"]
    assert m["n"] == 4 and m["matched_by_description"] == 2  # bridges 0 and 1 found again by description
    after = {r["description"]: r["id"] for r in _records(folder / "after.jsonl")}
    assert m["cv"] is None or set(m["cv"]["fold_of"]) <= set(after.values())
    capsys.readouterr()
    assert main(["calibrate", "after.jsonl", "--labels", "labels.jsonl"]) == 0
    out = capsys.readouterr().out
    assert "Unmatched labels (2; not counted)" in out and "labels.jsonl:3" in out
    assert "too few labels to measure: 2 pass and 2 fail" in out


def test_bad_labels_name_file_and_line(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _suite(folder, 2)
    _eval("r.jsonl")
    (folder / "labels.csv").write_text("case,assertion,human\nabc,faithfulness,pass\nabd,faithfulness,maybe\n")
    capsys.readouterr()
    assert main(["calibrate", "r.jsonl", "--labels", "labels.csv"]) == 2
    err = capsys.readouterr().err
    assert "labels.csv:3" in err and "`human` is 'maybe'" in err and "pass or fail" in err
    (folder / "labels.csv").write_text("case,assertion\nabc,faithfulness\n")
    assert main(["calibrate", "r.jsonl", "--labels", "labels.csv"]) == 2
    assert "no `human` column" in capsys.readouterr().err
    assert main(["calibrate", "r.jsonl"]) == 2
    assert "nothing to do" in capsys.readouterr().err


def _graded_record(i: int, grader: str, score: float) -> dict[str, Any]:
    return {"id": f"c{i}", "index": i, "description": f"case {i}", "vars": {}, "output": "x",
            "assertions": [{"type": "faithfulness", "pass": score >= 0.5, "score": score, "threshold": 0.5,
                            "grader": grader, "details": {}, "metric": None, "error": None}]}


def test_two_graders_side_by_side(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = [0.9, 0.8, 0.7, 0.2, 0.1, 0.6]
    b = [0.95, 0.3, 0.6, 0.1, 0.7, 0.55]  # disagrees on c1 (gap 0.5) and c4 (gap 0.6)
    (folder / "a.jsonl").write_text("".join(json.dumps(_graded_record(i, "builtin", s)) + "\n"
                                            for i, s in enumerate([*a, 0.5])))  # c6: only in A
    (folder / "b.jsonl").write_text("".join(json.dumps(_graded_record(i, "openai:gpt-4o-mini", s)) + "\n"
                                            for i, s in enumerate(b)))
    data = _calibrate(capsys, "a.jsonl", "b.jsonl")
    [m] = data["metrics"]
    assert (m["grader_a"], m["grader_b"], m["n"]) == ("builtin", "openai:gpt-4o-mini", 6)
    assert m["agreement"] == pytest.approx(4 / 6, abs=1e-4)
    # A passes 4/6, B passes 4/6: chance 4/6*4/6 + 2/6*2/6 = 5/9; kappa (2/3 - 5/9) / (4/9) = 1/4
    assert m["kappa"] == pytest.approx(0.25, abs=1e-4)
    assert [d["case"] for d in m["disagreements"]] == ["c4", "c1"]
    assert m["confusion"] == {"a_pass": {"b_pass": 3, "b_fail": 1}, "a_fail": {"b_pass": 1, "b_fail": 1}}
    assert (m["mean_score_a"], m["mean_score_b"]) == (pytest.approx(3.3 / 6, abs=1e-4), pytest.approx(3.2 / 6, abs=1e-4))
    assert (data["only_in_a"], data["only_in_b"]) == (1, 0)
    va, vb = [x >= 0.5 for x in a], [x >= 0.5 for x in b]
    rng = np.random.default_rng(0)  # the bootstrap of check_intervals, on the six pairs in suite order
    draws = [[(va[i], vb[i]) for i in rng.integers(0, 6, 6)] for _ in range(1000)]
    agree = [sum(x == y for x, y in d) / 6 for d in draws]
    kappas = [k for k in (_kappa([x for x, _ in d], [y for _, y in d]) for d in draws) if not math.isnan(k)]
    assert m["agreement_ci"] == pytest.approx(list(np.percentile(agree, [2.5, 97.5])), abs=1e-4)
    assert m["kappa_ci"] == pytest.approx(list(np.percentile(kappas, [2.5, 97.5])), abs=1e-4)
    capsys.readouterr()
    assert main(["calibrate", "a.jsonl", "b.jsonl", "-o", "graders.html"]) == 0
    out = capsys.readouterr().out
    assert "2 disagreement(s), largest score gap first" in out
    lo, hi = m["kappa_ci"]
    assert f"verdicts agree 0.67 [{m['agreement_ci'][0]:.2f}, {m['agreement_ci'][1]:.2f}]   Cohen's kappa 0.25 " \
        f"[{lo:.2f}, {hi:.2f}]   mean score A 0.55, B 0.53" in out
    assert "c4 case 4: A FAIL 0.10, B PASS 0.70" in out and "A pass: B pass 3, B fail 1 | A fail: B pass 1, B fail 1" in out
    assert "Not paired: 1 graded assertion(s) only in A, 0 only in B" in out
    many = [{**_graded_record(i, "builtin", 0.9), "id": f"d{i}"} for i in range(30)]
    (folder / "c.jsonl").write_text("".join(json.dumps(r) + "\n" for r in many))
    (folder / "d.jsonl").write_text("".join(json.dumps({**r, "assertions": [{**r["assertions"][0], "pass": False}]})
                                            + "\n" for r in many))
    [m] = _calibrate(capsys, "c.jsonl", "d.jsonl")["metrics"]
    assert m["n_disagreements"] == len(m["disagreements"]) == 30  # all listed in JSON: the ones to label
    page = (folder / "graders.html").read_text()
    assert "builtin (A) vs openai:gpt-4o-mini (B)" in page and "verdicts agree 0.67" in page
    assert CSP in page[:1000]


#: The calibration pages' policy: nothing loaded, no script (they have none), styles inline.
CSP = """<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline';"""


def _fill(path: Path, passes: str) -> None:
    rows = list(csv.DictReader(path.open()))
    for r in rows:
        r["human"] = "pass" if passes in r["description"] else "fail"
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def test_a_negated_metric_calibrates_in_its_own_direction(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """not-faithfulness records 1 - score and passes below its threshold: the threshold written to the suite is
    the one that reproduces, in a new run, the verdicts the calibration chose."""
    _suite(folder, assertion="{type: not-faithfulness}")
    _eval("r1.jsonl")
    assert main(["calibrate", "--template", "r1.jsonl", "-o", "labels.csv"]) == 0
    _fill(folder / "labels.csv", "wrong")  # the person passes the answers that are NOT faithful
    data = _calibrate(capsys, "r1.jsonl", "--labels", "labels.csv", "--min-labels", "10", "-o", "calibration.json")
    [m] = data["metrics"]
    assert m["metric"] == "not-faithfulness" and m["direction"] == "higher passes"
    assert m["suggested_yaml_threshold"] == pytest.approx(1 - m["suggested_threshold"], abs=1e-6)
    # worst first: farthest from the run's threshold on the recorded scale (1 - 0.7 for a negated metric)
    gaps = [abs(d["score"] - (1 - d["threshold"])) for d in m["disagreements"]]
    assert gaps and gaps == sorted(gaps, reverse=True)
    assert all(d["verdict"] != d["human"] for d in m["disagreements"])
    _suite(folder, assertion="", default="defaultTest: {assert: [{type: not-faithfulness, threshold: calibrated}]}")
    _eval("r2.jsonl")
    for r in _records(folder / "r2.jsonl"):
        a = r["assertions"][0]
        assert a["threshold"] == pytest.approx(m["suggested_yaml_threshold"])
        assert a["pass"] == (a["score"] >= m["suggested_threshold"]), r["description"]


def test_view_shows_the_runs_calibration_and_threshold_sources(folder: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    from evalrun.run.recording import last_run
    from tests.viewserver import get, serving

    _suite(folder)
    assert main(["eval", "evalrun.yaml", "--no-progress-bar", "--no-table"]) in (0, 100)
    run_file = last_run(folder / ".evalrun")
    assert run_file is not None
    assert main(["calibrate", "--template", ".evalrun/last-run.jsonl", "-o", "labels.csv"]) == 0
    rows = list(csv.DictReader((folder / "labels.csv").open()))
    for r in rows:
        r["human"] = "pass" if "faithful" in r["description"] else "fail"
    with (folder / "labels.csv").open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    data = _calibrate(capsys, ".evalrun/last-run.jsonl", "--labels", "labels.csv", "-o", "calibration.json")
    _suite(folder, assertion="", default="defaultTest: {assert: [{type: faithfulness, threshold: calibrated}]}")
    assert main(["eval", "evalrun.yaml", "--no-progress-bar", "--no-table"]) in (0, 100)
    second = last_run(folder / ".evalrun")
    assert second is not None and second != run_file
    with serving(folder / ".evalrun") as srv:
        first_page = get(srv, f"/api/runs/{run_file.stem}")["view"]["calibration"]
        second_page = get(srv, f"/api/runs/{second.stem}")["view"]["calibration"]
    [m] = first_page["agreement"]
    want = data["metrics"][0]
    assert (m["metric"], m["n"], m["balanced_accuracy"], m["auroc"], m["oof_balanced_accuracy"]) == (
        "faithfulness", 48, want["balanced_accuracy"], want["auroc"], want["oof_balanced_accuracy"])
    assert first_page["threshold_sources"] == [] and second_page["agreement"] == []
    [src] = second_page["threshold_sources"]
    assert src["file"] == "calibration.json" and src["threshold"] == want["suggested_yaml_threshold"]
    assert src["oof_balanced_accuracy"] == want["oof_balanced_accuracy"] and src["n"] == 48
