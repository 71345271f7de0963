"""`evalrun compare`: two real runs (echo provider, a Python provider, the fake OpenAI server), diffed."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from evalrun.cli import main
from tests.fakeserver import FakeOpenAI

TWO_PROMPTS = """
description: compare test
providers: [echo]
prompts: ["{PROMPT} {{{{q}}}}", {{label: fixed, raw: "Fixed: {{{{q}}}}"}}]
tests:
  - description: wants Answer
    vars: {{q: cats}}
    assert: [{{type: contains, value: Answer}}]
  - description: wants dogs
    vars: {{q: dogs}}
    assert: [{{type: contains, value: dogs}}]
  - description: wants Reply
    vars: {{q: fish}}
    assert: [{{type: contains, value: Reply}}]
"""


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _config(folder: Path, text: str) -> None:
    (folder / "evalrun.yaml").write_text(textwrap.dedent(text))


def _eval(*args: str) -> int:
    return main(["eval", "evalrun.yaml", "--no-progress-bar", "--no-table", *args])


def _compare(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any]]:
    capsys.readouterr()
    code = main(["compare", *args, "--format", "json"])
    return code, json.loads(capsys.readouterr().out)


def _validate(report: dict[str, Any]) -> None:
    from importlib import resources

    import jsonschema

    schema = json.loads(resources.files("evalrun.schemas").joinpath("results.schema.json").read_text())
    jsonschema.validate(report, schema)


def _kinds(data: dict[str, Any]) -> dict[str, str]:
    return {c["label"]: c["kind"] for c in data["cases"] if c["kind"] != "unchanged"}


def test_an_edited_prompt_names_exactly_the_cases_whose_verdict_changed(
        folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _config(folder, TWO_PROMPTS.format(PROMPT="Answer about"))
    assert _eval() == 100  # Reply fails on both prompts; Answer fails on "fixed"
    _config(folder, TWO_PROMPTS.format(PROMPT="Reply on"))
    assert _eval() == 100
    code, data = _compare(capsys, "latest~1", "latest")
    assert code == 0  # no --fail-on: a report, not a gate
    s = data["summary"]
    assert s["matched"] == 6 and s["added"] == 0 and s["removed"] == 0  # matched despite the edited prompt
    assert _kinds(data) == {"wants Answer [q=cats] | echo | Reply on {{q}}": "newly_failing",
                            "wants Reply [q=fish] | echo | Reply on {{q}}": "newly_passing"}
    assert s["newly_failing"] == 1 and s["newly_passing"] == 1 and s["regressions"] == 1
    assert s["prompts_changed"] == 1
    changed = [p for p in data["prompts"] if p["text_changed"]]
    assert len(changed) == 1 and changed[0]["a"]["label"] == "Answer about {{q}}"
    assert changed[0]["b"]["label"] == "Reply on {{q}}"
    rows = {(r["provider"], r["prompt"]): r for r in data["by_provider_prompt"]}
    edited = rows[("echo", "Reply on {{q}}")]
    assert edited["prompt_text_changed"] and edited["newly_failing"] == 1 and edited["newly_passing"] == 1
    assert rows[("echo", "fixed")]["newly_failing"] == 0 and rows[("echo", "fixed")]["pass_rate_delta"] == 0
    tests = {t["description"]: t for t in data["by_test"]}
    assert tests["wants Answer"]["regressions"] == 1 and tests["wants dogs"]["regressions"] == 0
    metrics = {m["name"]: m for m in data["by_metric"]}
    assert metrics['contains "Answer"']["cases_regressed"] == 1 and metrics['contains "Reply"']["cases_improved"] == 1

    assert main(["compare", "latest~1", "latest", "--fail-on", "regression"]) == 100
    text = capsys.readouterr().out
    assert "newly failing: wants Answer [q=cats] | echo | Reply on {{q}}: pass -> fail" in text
    assert "text changed" in text and "1 regression beyond tolerance 0" in text
    assert main(["compare", "latest~1", "latest", "--format", "markdown", "-o", "diff.md"]) == 0
    md = capsys.readouterr().out
    assert md.startswith("### evalrun compare: ❌ 1 regression") and "| echo | fixed |" in md
    assert (folder / "diff.md").read_text() == md
    # the reverse direction: the newly passing case is now the regression
    code, back = _compare(capsys, "latest", "latest~1", "--fail-on", "regression")
    assert code == 100 and _kinds(back)["wants Reply [q=fish] | echo | Answer about {{q}}"] == "newly_failing"
    # the same run against itself: nothing changed, the gate is open
    code, same = _compare(capsys, "latest", "latest", "--fail-on", "regression")
    assert code == 0 and same["cases"] == [] and same["summary"]["regressions"] == 0


def test_results_files_and_json_reports_compare_too(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _config(folder, TWO_PROMPTS.format(PROMPT="Answer about"))
    _eval("--no-history", "--results-file", "a.jsonl")
    _config(folder, TWO_PROMPTS.format(PROMPT="Reply on"))
    _eval("--no-history", "-o", "b.json")
    code, data = _compare(capsys, "a.jsonl", "b.json", "--fail-on", "regression")
    assert code == 100 and data["summary"]["newly_failing"] == 1 and data["a"]["label"] == "a.jsonl"
    assert not (folder / ".evalrun" / "history.sqlite").exists()


SCORED = """
providers: [echo]
prompts: ["{PROMPT}"]
tests:
  - description: two parts
    threshold: 0.5
    assert: [{{type: contains, value: alpha}}, {{type: contains, value: beta}}]
"""


def test_a_score_drop_is_a_regression_only_beyond_the_tolerance(folder: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    _config(folder, SCORED.format(PROMPT="alpha beta"))
    assert _eval() == 0
    _config(folder, SCORED.format(PROMPT="alpha gamma"))
    assert _eval() == 0  # still passes (0.5 >= threshold 0.5), but its score halved
    code, data = _compare(capsys, "--fail-on", "regression")  # default: latest~1 latest
    assert code == 100
    case = data["cases"][0]
    assert case["kind"] == "unchanged" and case["score_regressed"] and case["score_delta"] == -0.5
    assert [m["name"] for m in case["metric_deltas"] if m["regressed"]] == ['contains "beta"']
    code, data = _compare(capsys, "--fail-on", "regression", "--tolerance", "0.6")
    case = data["cases"][0]  # the case score fell by 0.5 (inside), its second assertion by 1 (beyond)
    assert code == 100 and not case["score_regressed"] and case["metric_deltas"][1]["regressed"]
    code, data = _compare(capsys, "--fail-on", "regression", "--tolerance", "1")
    assert code == 0 and data["summary"]["regressions"] == 0
    assert main(["compare", "--tolerance", "2"]) == 2


FLAKY_PROVIDER = """
from pathlib import Path

def call_api(prompt, options, context):
    counter = Path(__file__).with_name("calls.txt")
    n = int(counter.read_text()) if counter.exists() else 0
    counter.write_text(str(n + 1))
    mode = Path(__file__).with_name("mode.txt").read_text().strip()
    q = context["vars"]["q"]
    if mode == "steady" or q == "steady":
        return "ok " + q
    if q == "broken":
        return "nope"
    return ("ok " if n % 2 == 0 else "nope ") + q  # flaky: passes every other call
"""

REPEATED = """
providers: [file://prov.py]
prompts: ["{{q}}"]
tests:
  - description: steady
    vars: {q: steady}
    assert: [{type: starts-with, value: ok}]
  - description: sometimes
    vars: {q: sometimes}
    assert: [{type: starts-with, value: ok}]
  - description: breaks
    vars: {q: broken}
    assert: [{type: starts-with, value: ok}]
"""


def test_repeats_name_flaky_tests_and_compare_uses_intervals(folder: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    (folder / "prov.py").write_text(FLAKY_PROVIDER)
    _config(folder, REPEATED)
    (folder / "mode.txt").write_text("steady")
    assert _eval("--repeat", "5", "-j", "1", "--no-cache", "-o", "a.json") == 0
    capsys.readouterr()
    (folder / "mode.txt").write_text("flaky")
    assert _eval("--repeat", "5", "-j", "1", "--no-cache", "-o", "b.json") == 100
    out = capsys.readouterr().out
    assert "Repeats: 5 runs of each of 3 cases; 1 flaky: sometimes [q=sometimes]" in out
    b = json.loads((folder / "b.json").read_text())
    _validate(b)
    rep = b["summary"]["repeats"]
    assert rep["flaky_count"] == 1 and rep["flaky"][0]["passed"] in (2, 3) and rep["flaky"][0]["runs"] == 5
    stats = {g["label"].split(" [")[0]: g for g in b["repeat_stats"]}
    assert stats["breaks"]["pass_rate"] == 0 and stats["steady"]["pass_rate"] == 1
    lo, hi = stats["sometimes"]["pass_rate_ci"]
    assert 0 < lo < stats["sometimes"]["pass_rate"] < hi < 1
    code, data = _compare(capsys, "latest~1", "latest", "--fail-on", "regression")
    kinds = {c["label"].split(" [")[0]: c["kind"] for c in data["cases"]}
    # 5/5 -> 0/5: the Wilson intervals do not overlap; 5/5 -> 2 or 3 of 5: they do (within noise)
    assert kinds == {"breaks": "newly_failing", "sometimes": "noise"}
    assert code == 100 and data["summary"]["regressions"] == 1
    noisy = next(c for c in data["cases"] if c["kind"] == "noise")
    assert noisy["b"]["runs"] == 5 and len(noisy["b"]["pass_rate_ci"]) == 2
    capsys.readouterr()
    assert main(["runs"]) == 0
    assert "[1 flaky of 3 x5]" in capsys.readouterr().out


FAITHFUL = """
prompts: ["{{answer}}"]
providers: [echo]
tests:
  - description: eiffel
    vars:
      answer: The Eiffel Tower is in Paris. It was completed in 1889.
      context: ["CONTEXT"]
    options: {disableVarExpansion: true}
    assert: [{type: faithfulness}]
"""


def test_graded_results_report_which_claim_flipped(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _config(folder, FAITHFUL.replace("CONTEXT", "The Eiffel Tower is in Paris. It was completed in 1889."))
    assert _eval() == 0
    _config(folder, FAITHFUL.replace("CONTEXT", "The Eiffel Tower is in Paris. It was completed in 1925."))
    assert _eval() == 100
    code, data = _compare(capsys, "--fail-on", "regression")
    assert code == 100
    case = data["cases"][0]
    assert case["kind"] == "newly_failing" and case["vars_changed"]  # its context var was edited
    flips = case["claim_flips"]
    assert len(flips) == 1 and "1889" in flips[0]["claim"] and "Paris" not in flips[0]["claim"]
    assert flips[0]["a"] == "supported" and flips[0]["b"] in ("contradicted", "unsupported")
    capsys.readouterr()
    main(["compare"])
    assert "Claim flips (1):" in capsys.readouterr().out


def test_llm_runs_through_the_fake_server_compare(folder: Path, fake_openai: FakeOpenAI,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    config = f"""
        providers:
          - id: openai:chat:fake-model
            config: {{apiBaseUrl: "{fake_openai.url}", temperature: 0}}
        prompts: ["PROMPT {{{{country}}}}?"]
        tests:
          - vars: {{country: France}}
            assert: [{{type: icontains, value: paris}}]
          - vars: {{country: Italy}}
            assert: [{{type: icontains, value: rome}}]
    """
    _config(folder, config.replace("PROMPT", "Capital of"))
    answers = {"France": "Paris", "Italy": "Rome"}

    def reply(body: dict[str, Any]) -> dict[str, Any]:
        text = body["messages"][-1]["content"]
        return {"content": next(v for k, v in answers.items() if k in text)}

    fake_openai.default = reply
    assert _eval("--no-cache") == 0
    answers["Italy"] = "Milan"  # the model now answers Italy wrongly, and the prompt is edited
    _config(folder, config.replace("PROMPT", "What is the capital city of"))
    assert _eval("--no-cache") == 100
    # the two cases run concurrently: the edited prompt is in one of the last two requests, in either order
    assert any("What is the capital city of Italy?" in json.dumps(r) for r in fake_openai.requests[-2:])
    code, data = _compare(capsys, "--fail-on", "regression")
    assert code == 100 and data["summary"]["matched"] == 2 and data["summary"]["prompts_changed"] == 1
    assert _kinds(data) == {
        "country=Italy | openai:chat:fake-model | What is the capital city of {{country}}?": "newly_failing"}
    fake_openai.default = lambda body: {"status": 500}
    assert _eval("--no-cache") == 100
    code, data = _compare(capsys, "latest~1", "latest")
    errors = [c for c in data["cases"] if c["kind"] == "new_error"]
    assert len(errors) == 2 and all(c["b"]["error"] for c in errors)


NAMED = """
providers: [echo]
prompts: ["{PROMPT}"]
tests:
  - description: refund
    assert: [{{type: contains, value: refund}}, {{type: not-contains, value: sorry}}]
  - description: apology
    assert: [{{type: not-contains, value: refund}}, {{type: contains, value: sorry}},
             {{type: contains, value: sorry}}, {{type: icontains, value: ok, metric: tone}}]
"""


def test_metrics_are_named_by_metric_or_type_and_value_not_by_position(
        folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """One row per assertion (issue 37): `contains[0]` mixed `contains refund` of one test with `not-contains refund`
    of the other; a metric's name or the type and value name it, its position only breaks a tie."""
    _config(folder, NAMED.format(PROMPT="refund ok"))
    _eval()
    _config(folder, NAMED.format(PROMPT="sorry"))
    _eval()
    _, data = _compare(capsys)
    rows = {m["name"]: m for m in data["by_metric"]}
    assert set(rows) == {'contains "refund"', 'not-contains "sorry"', 'not-contains "refund"', 'contains "sorry"',
                         'contains "sorry" [2]', "tone"}
    assert rows['contains "refund"']["score_a"] == 1 and rows['contains "refund"']["score_b"] == 0
    assert rows['not-contains "refund"']["score_a"] == 0 and rows['not-contains "refund"']["score_b"] == 1
    assert rows["tone"]["cases_regressed"] == 1
    text = main(["compare"]) == 0 and capsys.readouterr().out
    assert 'not-contains "refund"' in str(text)
