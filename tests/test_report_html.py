"""The HTML report's data (pure parts): rounding, rendered prompts, claim spans, charts, the diff page."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evalrun.cli import main
from evalrun.report import console
from evalrun.report import html as report_html
from evalrun.report.html import dumps


def test_spans_highlight_the_supporting_sentence() -> None:
    chunk = "The tower is in Paris. It was completed in 1889. It is 330 metres tall."
    [[s, e]] = report_html.spans("The Eiffel Tower was completed in 1889.", chunk)
    assert chunk[s:e] == "It was completed in 1889."
    assert report_html.spans("", chunk) == [] and report_html.spans("zebra", chunk) == []
    decimal = "A total eclipse can last up to 7.5 minutes. Totality is short."
    [[s, e]] = report_html.spans("An eclipse lasts up to 7.5 minutes.", decimal)
    assert decimal[s:e] == "A total eclipse can last up to 7.5 minutes."


def test_data_cannot_close_its_script_element() -> None:
    hostile = {"output": "</script><script>alert(1)</script><!-- & 'q' \u2028 é", "n": [1, 2.5, None]}
    text = dumps(hostile)
    assert not any(c in text for c in "<>&'")  # nothing the HTML parser could read as markup
    assert json.loads(text) == hostile and "é" in text  # plain JSON, non-ASCII kept as is


def test_detail_shows_the_rendered_prompt_and_rounded_scores() -> None:
    rec = {"prompt": "Say hello", "output": "hello", "vars": {"q": "hello"}, "id": "x", "status": "pass",
           "assertions": [{"type": "context-relevance", "pass": True, "score": 0.41666666666666663,
                           "threshold": 0.3, "weight": 1, "reason": "ok",
                           "details": {"chunks": [{"text": "A. B.", "level": "medium", "used": True}],
                                       "raw_replies": ["secret"]}}]}
    d = report_html.detail(rec)
    assert d["prompt"] == "Say hello" and d["assertions"][0]["score"] == 0.417
    assert "raw_replies" not in json.dumps(d) and d["assertions"][0]["chunks"][0]["level"] == "medium"
    assert report_html.rnd(float("nan")) is None and console.cut("x" * 10, 5) == "xxxx…"


def test_histogram_and_delta_bars_are_inline_svg() -> None:
    svg = report_html.histogram([0, 1, 0, 0, 0, 0, 0, 0, 2, 5], "faithfulness")
    assert svg.startswith("<svg") and svg.count("<rect") == 10 and "http" not in svg
    assert "0.9–1.0: 5" in svg
    bars = report_html.delta_bars([("a", -0.5, False), ("b", 0.25, False)])
    assert bars.count("<rect") == 2 and "a: -0.500" in bars


CONFIG = """
providers: [echo]
prompts: ["{P} {{{{q}}}}"]
tests:
  - description: greets
    vars: {{q: hello}}
    assert: [{{type: contains, value: Hi}}]
  - description: ends
    vars: {{q: bye}}
    assert: [{{type: contains, value: bye}}]
"""


def _data(path: Path) -> dict[str, Any]:
    html = path.read_text(encoding="utf-8")
    assert "http://" not in html and "https://" not in html and "<script src" not in html
    start = html.index('type="application/json">') + len('type="application/json">')
    data: dict[str, Any] = json.loads(html[start:html.index("</script>", start)])
    return data


def test_run_report_and_diff_page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "evalrun.yaml").write_text(CONFIG.format(P="Hi"))
    assert main(["eval", "evalrun.yaml", "--no-progress-bar", "--no-table", "-o", "a.html"]) == 0
    run = _data(tmp_path / "a.html")
    assert run["kind"] == "run" and run["prompts_list"] == ["Hi {{q}}"]
    assert run["cases"][0][1]["prompt"] == "Hi hello"  # the rendered prompt, not the template
    (tmp_path / "evalrun.yaml").write_text(CONFIG.format(P="Yo"))
    assert main(["eval", "evalrun.yaml", "--no-progress-bar", "--no-table"]) == 100
    assert main(["compare", "-o", "diff.html", "--fail-on", "regression"]) == 100
    diff = _data(tmp_path / "diff.html")
    assert diff["kind"] == "diff" and diff["summary"]["newly_failing"] == 1
    assert [c[0][3] for c in diff["cases"]] == ["newly_failing"]  # only changed cases are listed
    assert diff["cases"][0][1]["output_a"] == "Hi hello" and diff["cases"][0][1]["output_b"] == "Yo hello"
    assert diff["matrix"][0][0]["pass_rate_a"] == 1 and diff["matrix"][0][0]["pass_rate_b"] == 0.5
    assert "<svg" in diff["metric_svg"]


def test_flaky_cases_are_marked_in_the_report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.test_compare import FLAKY_PROVIDER, REPEATED

    monkeypatch.chdir(tmp_path)
    (tmp_path / "prov.py").write_text(FLAKY_PROVIDER)
    (tmp_path / "mode.txt").write_text("flaky")
    (tmp_path / "evalrun.yaml").write_text(REPEATED)
    assert main(["eval", "evalrun.yaml", "--no-progress-bar", "--no-table", "--repeat", "4", "-j", "1",
                 "--no-cache", "-o", "r.html"]) == 100
    data = _data(tmp_path / "r.html")
    flaky = {c[0][1].split(" [")[0] for c in data["cases"] if c[0][8]}
    assert flaky == {"sometimes"} and data["summary"]["repeats"]["flaky_count"] == 1
