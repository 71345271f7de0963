"""The console shows graded results: per case each graded assertion's score against its threshold and the claim
that decided it, every failing assertion (not only the first), and each graded type's mean; the HTML report
names the assertions that failed a case next to its score."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import pytest

from evalrun.cli import main

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

REFUND = """
prompts: ["{{answer}}"]
providers: [echo]
tests:
  - description: six weeks ago
    vars:
      answer: The refund takes 60 days. You can get it in cash.
      context: Refunds are processed within 30 days of the request. Refunds go back to the original card.
    assert:
      - type: faithfulness
        threshold: 0.7
      - type: not-contains
        value: cash
      - type: noise-sensitivity
        value: Refunds are processed within 30 days.
  - description: on time
    vars:
      answer: Refunds are processed within 30 days.
      context: Refunds are processed within 30 days of the request.
    assert:
      - type: faithfulness
"""


def _run(tmp_path: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> str:
    (tmp_path / "c.yaml").write_text(textwrap.dedent(REFUND))
    capsys.readouterr()
    main(["eval", str(tmp_path / "c.yaml"), "--no-progress-bar", "--no-history", *extra])
    return capsys.readouterr().out


def test_a_failing_case_shows_each_graded_score_and_the_claim_that_decided_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "160")
    out = _run(tmp_path, capsys)
    flat = " ".join(line.strip("| ") for line in out.splitlines())  # a long line wraps in its cell
    flat = re.sub(r"\s+", " ", flat)
    assert re.search(r'✗ faithfulness 0\.\d\d < 0\.70: "The refund takes 60 days\." contradicted', flat), out
    assert '✗ not-contains: Output contains "cash"' in flat  # every failing assertion, not only the first
    assert re.search(r'✗ noise-sensitivity 0\.\d\d > 0\.20: "The refund takes 60 days\." contradicted', flat)
    assert re.search(r"✓ faithfulness \d\.\d\d ≥ 0\.70", flat)  # a passing graded assertion shows its score
    means = next(line for line in out.splitlines() if line.startswith("Graded means: "))
    assert re.fullmatch(r"Graded means: faithfulness 0\.\d\d \[1/2 passed\], noise-sensitivity 0\.\d\d "
                        r"\(lower is better\) \[0/1 passed\]", means), means


def test_the_rag_app_example_shows_scores_not_bare_pass(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    main(["eval", str(EXAMPLES / "rag-app" / "evalrun.yaml"), "--no-progress-bar", "--no-history",
          "--results-file", str(tmp_path / "r.jsonl")])
    out = capsys.readouterr().out
    assert out.count("[PASS]") == 5
    for name, op, thr in (("faithfulness", "≥", "0.70"), ("context-relevance", "≥", "0.30"),
                          ("noise-sensitivity", "≤", "0.20")):
        assert len(re.findall(rf"✓ {name} \d\.\d\d {op} {thr}", out)) == 5, name
    assert "Graded means: context-relevance " in out


def test_the_html_report_names_the_failing_assertions_by_the_case_score(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _run(tmp_path, capsys, "-o", str(tmp_path / "r.html"))
    html = (tmp_path / "r.html").read_text()
    start = html.index('type="application/json">') + len('type="application/json">')
    data = json.loads(html[start:html.index("</script>", start)])
    failing, passing = (c[0] for c in data["cases"])
    assert re.fullmatch(r"faithfulness 0\.\d\d < 0\.70; not-contains; noise-sensitivity 0\.\d\d > 0\.20",
                        failing[9]), failing
    assert passing[9] == ""
    assert "r[9]" in html  # the page shows it in the score cell


@pytest.mark.parametrize(("a", "want"), [
    ({"type": "context-recall", "score": 0.5, "threshold": 0.7, "pass": False, "grader": "builtin",
      "details": {"claims": [{"text": "It was chosen in 1908.", "attributed": False},
                             {"text": "Canberra is the capital.", "attributed": True}]}},
     'context-recall 0.50 < 0.70: "It was chosen in 1908." not in the context'),
    ({"type": "noise-sensitivity", "score": 0.5, "threshold": 0.2, "pass": False, "grader": "builtin",
      "lower_is_better": True,
      "details": {"claims": [{"text": "A", "verdict": "supported", "counted": False},
                             {"text": "B", "verdict": "contradicted", "counted": True, "reason": 'says 9: "x"'}]}},
     'noise-sensitivity 0.50 > 0.20: "B" contradicted: says 9'),
    ({"type": "faithfulness", "score": 1.0, "threshold": 0.7, "pass": True, "grader": "builtin",
      "details": {"claims": [{"text": "A", "verdict": "supported"}]}}, "faithfulness 1.00 ≥ 0.70"),
    ({"type": "context-relevance", "score": None, "pass": False, "error": "no query: set `vars.query`"},
     "context-relevance: ERROR no query: set `vars.query`"),
])
def test_brief(a: dict[str, object], want: str) -> None:
    from evalrun.report.console import brief

    assert brief(a) == want


def test_one_line_rows_stay_compact(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "c.yaml").write_text(textwrap.dedent("""
        prompts: ["{{q}}"]
        providers: [echo]
        tests:
          - vars: {q: one}
          - vars: {q: two}
            assert: [{type: contains, value: zzz}, {type: contains, value: yyy}]
          - vars: {q: three}
          - vars: {q: four}
        """))
    main(["eval", str(tmp_path / "c.yaml"), "--no-progress-bar", "--no-history"])
    table = [line for line in capsys.readouterr().out.splitlines() if line[:1] in "|+"]
    body = table[3:-1]  # below the header's === rule, above the closing rule
    assert [line[:8] for line in body] == ["| q=one ", "+-------", "| q=two ", "|       ", "|       ",
                                           "+-------", "| q=thre", "| q=four"]
    assert "✗ contains: " in body[3] and "✗ contains: " in body[4]  # both failing assertions, not the first only


LONG = """
prompts: ["{{answer}}"]
providers: [echo]
tests:
  - description: long claim
    vars:
      answer: The refund for the premium subscription purchased through the mobile application takes about sixty days
        to arrive at the customer. You can get it in cash at any branch office.
      context: Refunds are processed within 30 days of the request. Refunds go back to the original card.
    assert:
      - type: faithfulness
        threshold: 0.7
"""


def _flat(out: str) -> str:
    return re.sub(r"\s+", " ", " ".join(line.strip("| ") for line in out.splitlines()))


def test_table_cell_max_length_shows_the_deciding_claim_whole(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """issue 37: the claim that decided a case ends in "…" even on a wide terminal; --table-cell-max-length N cuts a
    cell line at N characters (promptfoo's option) and wraps it whole."""
    monkeypatch.setenv("COLUMNS", "100")
    (tmp_path / "c.yaml").write_text(textwrap.dedent(LONG))
    cfg = str(tmp_path / "c.yaml")
    claim = ('"The refund for the premium subscription purchased through the mobile application takes about sixty '
             'days to arrive at the customer." unsupported')
    capsys.readouterr()
    main(["eval", cfg, "--no-progress-bar", "--no-history"])
    assert claim not in _flat(capsys.readouterr().out)  # cut in the compact table
    main(["eval", cfg, "--no-progress-bar", "--no-history", "--table-cell-max-length", "1000"])
    out = capsys.readouterr().out
    assert claim in _flat(out) and "not in the context" in _flat(out)
    rule = next(line for line in out.splitlines() if line.startswith("+"))
    assert {len(line) for line in out.splitlines() if line.startswith("|")} == {len(rule)}  # wrapped in its column
    main(["eval", cfg, "--no-progress-bar", "--no-history", "--table-cell-max-length", "30"])
    out = capsys.readouterr().out
    assert "[FAIL] The refund for the pre…" in out and "sixty" not in out.split("Results:")[0]
    assert len("[FAIL] The refund for the pre…") == 30
    assert main(["eval", cfg, "--table-cell-max-length", "0"]) == 2


def test_verbose_prints_each_failing_case_as_pytest_does(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--verbose: after the table, each case that did not pass in `pytest evalrun.yaml`'s words (one renderer:
    console.failure_text), its graded claims, verdicts and evidence whole."""
    from evalrun.report import console
    from evalrun.run.store import read_records

    out = _run(tmp_path, capsys, "--verbose", "--results-file", str(tmp_path / "r.jsonl"))
    records = [rec for _, rec in read_records(tmp_path / "r.jsonl")]
    failing = [r for r in records if r["status"] != "pass"]
    assert len(failing) == 1 and len(records) == 2
    assert console.failure_text(failing[0]) in out
    assert out.count("--- FAIL six weeks ago") == 1 and "--- PASS" not in out
    assert re.search(r"- contradicted: 'The refund takes 60 days\.' — .+", out)  # claim, verdict, evidence
    assert out.index("--- FAIL") < out.index("Results:")
    assert "--- FAIL" not in _run(tmp_path, capsys)  # not without --verbose


def test_verbose_prints_an_assertions_error_whole(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--verbose prints an erroring assertion's whole message (its `error_detail`), not the table's one-line cut
    that ends in "(full text in error_detail)"."""
    (tmp_path / "c.yaml").write_text("prompts: ['{{q}}']\nproviders: [echo]\ntests:\n  - vars: {q: hello}\n"
                                     "    assert: [{type: perplexity-score, threshold: 0.5}]\n")
    main(["eval", str(tmp_path / "c.yaml"), "--no-progress-bar", "--no-history", "--verbose"])
    out = capsys.readouterr().out.split("--- ERROR")[1]
    line = next(x for x in out.splitlines() if x.startswith("  [ERROR] perplexity-score"))
    assert "full text in error_detail" not in line and line.rstrip().endswith("return `logProbs: [...]` with the output")
