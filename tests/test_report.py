"""Reports: every format from one real run; the JSON validates against schemas/results.schema.json."""

from __future__ import annotations

import asyncio
import csv
import json
import xml.etree.ElementTree as ET
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from evalrun import report
from evalrun.errors import ProviderError, UsageError
from evalrun.report import console
from evalrun.run.options import RunOptions
from evalrun.run.runner import Runner
from evalrun.types import ProviderSpec
from tests.test_runner_support import ScriptedProvider, check, make_test, simple_cases, suite


@pytest.fixture
def outcome(tmp_path: Path) -> Any:
    s = suite([
        make_test(0, {"q": "hello <world> & \x01 co"}, check("contains", "hello")),
        make_test(1, {"q": "goodbye"}, check("contains", "hello"), description="needs a greeting"),
        make_test(2, {"q": "fails-upstream"}, check("contains", "x")),
        make_test(3, {"q": "Paris is the capital of France.", "context": "Paris is the capital of France."},
                  check("faithfulness")),
    ], providers=(ProviderSpec("echo", label="my-echo"),))
    provider = ScriptedProvider(ProviderSpec("echo"), reply=lambda p: ProviderError("503 upstream")
                                if p == "fails-upstream" else p)
    opts = RunOptions(results_file=tmp_path / "run.jsonl")
    return asyncio.run(Runner(s, opts, build_provider=lambda *a: provider, cases=simple_cases).run())


def _schema() -> dict[str, Any]:
    text = resources.files("evalrun.schemas").joinpath("results.schema.json").read_text()
    data: dict[str, Any] = json.loads(text)
    return data


def test_json_output_validates_against_the_results_schema(outcome: Any, tmp_path: Path) -> None:
    report.write(str(tmp_path / "out.json"), outcome)
    data = json.loads((tmp_path / "out.json").read_text())
    jsonschema.validate(data, _schema())
    assert [r["status"] for r in data["results"]] == ["pass", "fail", "error", "pass"]
    assert data["summary"]["total"] == 4 and data["summary"]["errors"] == 1
    claims = data["results"][3]["assertions"][0]["details"]
    assert claims, "claim-level metrics put their claims in details"


def test_schema_rejects_a_broken_result(outcome: Any, tmp_path: Path) -> None:
    report.write(str(tmp_path / "out.json"), outcome)
    data = json.loads((tmp_path / "out.json").read_text())
    del data["results"][0]["assertions"][0]["error"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(data, _schema())


def test_jsonl_lines_are_results_in_order(outcome: Any, tmp_path: Path) -> None:
    report.write(str(tmp_path / "out.jsonl"), outcome)
    lines = [json.loads(x) for x in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert [r["index"] for r in lines] == [0, 1, 2, 3]
    validator = jsonschema.Draft202012Validator(_schema()["$defs"]["result"] | {"$defs": _schema()["$defs"]})
    for rec in lines:
        validator.validate(rec)


def test_csv(outcome: Any, tmp_path: Path) -> None:
    report.write(str(tmp_path / "out.csv"), outcome)
    rows = list(csv.DictReader((tmp_path / "out.csv").open(encoding="utf-8", newline="")))
    assert [r["status"] for r in rows] == ["pass", "fail", "error", "pass"]
    assert json.loads(rows[0]["vars"])["q"].startswith("hello <world>")
    assert "contains: FAIL" in rows[1]["assertions"]


def test_junit_distinguishes_failures_and_errors(outcome: Any, tmp_path: Path) -> None:
    report.write(str(tmp_path / "out.xml"), outcome)
    root = ET.parse(tmp_path / "out.xml").getroot()  # parses despite <, & and a control character
    assert root.attrib["tests"] == "4" and root.attrib["failures"] == "1" and root.attrib["errors"] == "1"
    cases = root.findall(".//testcase")
    assert len(cases) == 4 and cases[0].attrib["classname"] == "my-echo"
    assert cases[1].find("failure") is not None and cases[1].find("error") is None
    assert "needs a greeting" in cases[1].attrib["name"]
    err = cases[2].find("error")
    assert err is not None and "503 upstream" in err.attrib["message"]


def test_html_is_self_contained_and_carries_the_results(outcome: Any, tmp_path: Path) -> None:
    report.write(str(tmp_path / "out.html"), outcome)
    html = (tmp_path / "out.html").read_text(encoding="utf-8")
    assert "http://" not in html and "https://" not in html and "<script src" not in html
    start = html.index('type="application/json">') + len('type="application/json">')
    data = json.loads(html[start:html.index("</script>", start)])
    assert len(data["cases"]) == 4 and data["summary"]["failed"] == 1
    assert "raw_replies" not in json.dumps(data["cases"])
    rows = [c[0] for c in data["cases"]]
    assert [r[4] for r in rows] == [0, 1, 2, 0]  # pass, fail, error, pass
    assert data["providers"] == ["my-echo"] and data["matrix"] == [[[2, 1, 1]]]
    assert "<svg" in data["status_svg"] and any(m["name"] == "faithfulness" for m in data["metrics"])
    graded = data["cases"][3][1]["assertions"][0]
    assert graded["claims"][0]["verdict"] == "supported" and graded["claims"][0]["chunks"] == [0]


def test_console_table_and_summary(outcome: Any) -> None:
    table = console.table(outcome, width=120)
    assert "[PASS] hello <world>" in table and "[FAIL]" in table and "[ERROR] provider my-echo: 503" in table
    # header and rules, then 4 rows: the failing one shows its assertion, the graded one its score; rules
    # between rows once a row takes several lines
    assert len(table.splitlines()) == 3 + 1 + 1 + 2 + 1 + 1 + 1 + 2 + 1
    assert "  ✗ contains: Output does not contain \"hello\"" in table and "  ✓ faithfulness 1.00 ≥ 0.70" in table
    text = console.summary(outcome)
    assert "Results: 1 passed" not in text and "2 passed, 1 failed, 1 error of 4 cases (50.00% pass rate)" in text
    assert "Graded by builtin" in text and "--grader MODEL" in text
    assert "Graded means: faithfulness 1.00 [1/1 passed]" in text


def test_table_rows_are_capped(outcome: Any) -> None:
    table = console.table(outcome, max_rows=2)
    assert "... 2 more cases not shown" in table and "goodbye" in table and "Paris" not in table


def test_unknown_extension_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="unknown output format"):
        report.check_path("out.docx")
