"""`evalrun calibrate`'s inputs and a suite's use of a calibration: every bad labels file is one message naming the
file and line (exit 2, no traceback); labels found by description + `vars`; `threshold: calibrated` errors point at
the key's own line; a builtin grader of another build is warned about."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from evalrun.cli import main
from evalrun.grading.select import grader_identity
from tests.fakeserver import FakeOpenAI
from tests.graderfakes import route, user_text
from tests.test_calibrate_cli import _suite

SUITE = """prompts: ['{{answer}}']
providers: [echo]
tests:
  - description: same
    vars: {answer: Paris is in France., context: Paris is the capital of France.}
  - description: same
    vars: {answer: Paris is in Spain., context: Paris is the capital of France.}
defaultTest:
  assert:
    - type: faithfulness
      threshold: calibrated
"""


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(("name", "content", "says"), [
    ("gone.csv", None, "cannot read labels 'gone.csv'"),
    ("l.jsonl", '{"case": "c0", "assertion": "faithfulness", "human": "pass"}\n{oops\n', "l.jsonl:2: not JSON"),
    ("l.jsonl", '["c0", "pass"]\n', "l.jsonl:1: a label must be a JSON object"),
    ("l.jsonl", '{"case": "c0", "assertion": "faithfulness"}\n', "no row has `human` filled in (1 empty)"),
    ("l.jsonl", '{"case": "c0", "assertion": "faithfulness", "human": true}\n', "l.jsonl:1: `human` is True"),
    ("l.csv", "case,assertion,human\nc0,faithfulness,PASS\nc1,,fail\n", "l.csv:3: no `assertion`"),
    ("l.csv", "assertion,human\nfaithfulness,pass\n", "l.csv:2: neither `case` nor `description`"),
    ("l.csv", "description,vars,assertion,human\nsame,{bad,faithfulness,fail\n", "l.csv:2: `vars` is not JSON"),
    ("l.csv", "case;assertion;human\nc0;faithfulness;pass\n", "l.csv:1: no `human` column"),
    ("l.csv", "", "l.csv:1: no `human` column"),
])
def test_a_bad_labels_file_is_one_clear_error(folder: Path, capsys: pytest.CaptureFixture[str], name: str,
                                              content: str | None, says: str) -> None:
    if content is not None:
        (folder / name).write_text(content)
    code, out, err = _run(capsys, "calibrate", "r.jsonl", "--labels", name)
    assert code == 2 and out == "" and says in err and "Traceback" not in err
    assert "hint:" in err


def test_labels_found_by_description_and_vars(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (folder / "evalrun.yaml").write_text(SUITE.replace("      threshold: calibrated\n", ""))
    assert main(["eval", "evalrun.yaml", "--no-progress-bar", "--no-table", "--results-file", "r.jsonl"]) in (0, 100)
    spain = json.dumps({"context": "Paris is the capital of France.", "answer": "Paris is in Spain."})
    (folder / "l.csv").write_text('description,vars,assertion,human\nsame,"' + spain.replace('"', '""')
                                  + '",faithfulness,fail\nsame,,faithfulness,pass\n')
    code, out, _ = _run(capsys, "calibrate", "r.jsonl", "--labels", "l.csv", "--json")
    data = json.loads(out)
    [m] = data["metrics"]
    assert code == 0 and m["n"] == 1 and m["matched_by_description"] == 1 and m["n_human_fail"] == 1
    # the Spain case (the grader fails it; it passes France's): the vars told the two apart
    assert m["confusion"]["human_fail"] == {"grader_pass": 0, "grader_fail": 1}
    [u] = data["unmatched"]  # the label without vars names two cases: reported, not guessed
    assert u["where"] == "l.csv:3" and "2 cases have this description" in u["why"]


def _calibration(folder: Path, **grader: str | None) -> None:
    (folder / "calibration.json").write_text(json.dumps({"kind": "evalrun-calibration", "format": 1, "metrics": [
        {"metric": "faithfulness", "grader": grader, "threshold": 0.4, "oof_balanced_accuracy": 0.8, "n": 50}]}))


def test_another_build_of_the_builtin_grader_is_warned(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (folder / "evalrun.yaml").write_text(SUITE)
    _calibration(folder, **grader_identity("builtin"))
    code, out, err = _run(capsys, "validate", "evalrun.yaml")
    assert code == 0 and "faithfulness: 0.4 from calibration.json" in out and "calibrated" not in err
    _calibration(folder, **{**grader_identity("builtin"), "model_hash": "0" * 16})
    code, out, err = _run(capsys, "eval", "evalrun.yaml", "--dry-run")
    assert code == 0 and "model_hash differs" in err and "evalrun.yaml:10" in err
    assert err.count("was calibrated") == 1  # once per calibration and grader, not once per test
    _calibration(folder, id="builtin", version="0.0.1", model_hash="0" * 16)
    assert "version and model_hash differ" in _run(capsys, "validate", "evalrun.yaml")[1]


def test_calibrated_threshold_errors_point_at_the_key(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _calibration(folder, **grader_identity("builtin"))
    (folder / "evalrun.yaml").write_text(SUITE.replace("type: faithfulness", "type: faithfulness\n      metric: other"))
    code, _, err = _run(capsys, "validate", "evalrun.yaml")
    assert code == 2 and "evalrun.yaml:12: defaultTest.assert[0].threshold: calibration 'calibration.json' " \
        "has no metric 'other' (it has: faithfulness)" in err
    (folder / "evalrun.yaml").write_text(SUITE.replace("threshold: calibrated", "value: x\n"
                                                       "      calibration: file://calibration.json")
                                         .replace("type: faithfulness", "type: not-contains"))
    code, _, err = _run(capsys, "validate", "evalrun.yaml")
    assert code == 2 and "evalrun.yaml:12: defaultTest.assert[0].calibration: not-contains has no calibrated " \
        "threshold: only graded assertions" in err
    (folder / "evalrun.yaml").write_text(SUITE.replace("type: faithfulness", "type: faithfulnes"))
    code, _, err = _run(capsys, "validate", "evalrun.yaml")
    assert code == 2 and "unknown assertion type 'faithfulnes'" in err and "faithfulness" in err


def test_two_real_runs_graded_by_builtin_and_an_llm(folder: Path, fake_openai: FakeOpenAI,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """The same suite run twice, by the builtin grader and by an LLM grader (the fake server: it supports every
    claim but one about ships), paired case by case across the two results files."""
    _suite(folder, 12)
    assert main(["eval", "evalrun.yaml", "--no-progress-bar", "--no-table", "--results-file", "a.jsonl"]) in (0, 100)
    text = (folder / "evalrun.yaml").read_text()
    llm = f"defaultTest: {{options: {{provider: {{id: openai:chat:fake-model, config: {{apiBaseUrl: '{fake_openai.url}'}}}}}}}}\n"
    (folder / "evalrun.yaml").write_text(llm + text)
    route(fake_openai, extract=lambda body: {"claims": [re.findall(r"Bridge \d+ opened[^.]*\.", user_text(body))[0]]},
          verify=lambda body: {"verdicts": [{"verdict": "contradicted" if "ships" in user_text(body) else "supported",
                                             "reason": "r", "evidence": [0]}]})
    assert main(["eval", "evalrun.yaml", "--no-progress-bar", "--no-table", "--results-file", "b.jsonl"]) in (0, 100)
    a, b = ({json.loads(line)["id"]: json.loads(line)["assertions"][0] for line in (folder / f).read_text().splitlines()}
            for f in ("a.jsonl", "b.jsonl"))
    assert a.keys() == b.keys() and len(a) == 12 and all(r["grader"] == "openai:chat:fake-model" for r in b.values())
    assert [r["pass"] for r in b.values()].count(False) == 3  # bridges 3, 7 and 11 carry ships
    code, out, _ = _run(capsys, "calibrate", "a.jsonl", "b.jsonl", "--json")
    data = json.loads(out)
    [m] = data["metrics"]
    differ = {i for i in a if a[i]["pass"] != b[i]["pass"]}
    assert code == 0 and (m["n"], m["grader_a"], m["grader_b"]) == (12, "builtin", "openai:chat:fake-model")
    assert differ and m["agreement"] == pytest.approx(1 - len(differ) / 12, abs=1e-4)
    assert {d["case"] for d in m["disagreements"]} == differ and m["n_disagreements"] == len(differ)
    assert (data["only_in_a"], data["only_in_b"]) == (0, 0)
    capsys.readouterr()
    assert main(["calibrate", "a.jsonl", "b.jsonl"]) == 0
    assert "to label them: evalrun calibrate --template a.jsonl b.jsonl -o labels.csv" in capsys.readouterr().out
    code, out, _ = _run(capsys, "calibrate", "--template", "a.jsonl", "b.jsonl", "-o", "labels.jsonl")
    rows = [json.loads(line) for line in (folder / "labels.jsonl").read_text().splitlines()]
    assert code == 0 and f"Wrote {len(differ)} rows where a.jsonl and b.jsonl disagree" in out
    assert {r["case"] for r in rows} == differ and all(r["grader"] == "builtin" and r["human"] == "" for r in rows)
    assert main(["eval", "evalrun.yaml", "--no-progress-bar", "--no-table", "--results-file", "c.jsonl"]) in (0, 100)
    code, out, _ = _run(capsys, "calibrate", "--template", "b.jsonl", "c.jsonl", "-o", "none.csv")
    assert code == 0 and "agree on every paired verdict: nothing to label" in out and not (folder / "none.csv").exists()


@pytest.mark.parametrize(("content", "says"), [
    ("{not json", "calibration 'calibration.json' is not JSON"),
    ('{"metrics": []}', "'calibration.json' is not an evalrun calibration file"),
    ('{"kind": "evalrun-calibration", "format": 2, "metrics": []}', "has format 2; this evalrun reads format 1"),
    ('{"kind": "evalrun-calibration", "format": 1, "metrics": [{"metric": "faithfulness", "threshold": "high"}]}',
     "gives faithfulness no threshold"),
])
def test_a_bad_calibration_file_is_a_config_error(folder: Path, capsys: pytest.CaptureFixture[str], content: str,
                                                  says: str) -> None:
    (folder / "evalrun.yaml").write_text(SUITE)
    (folder / "calibration.json").write_text(content)
    code, _, err = _run(capsys, "validate", "evalrun.yaml")
    assert code == 2 and "evalrun.yaml:11: defaultTest.assert[0].threshold:" in err and says in err
    assert "hint:" in err and "Traceback" not in err
