"""Reading results back (run/store.py): `merge`, `report`, `compare` and `--filter-failing` read the results
JSONL and the -o .json report completely, and refuse every other report with an error naming the file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalrun.cli import main

ROWS = 40


def _suite(tmp_path: Path) -> Path:
    """A 40-row JSONL suite; every 5th row fails."""
    with open(tmp_path / "rows.jsonl", "w") as f:
        for i in range(ROWS):
            want = "nope" if i % 5 == 0 else "question"
            f.write(json.dumps({"vars": {"q": f"question {i}"}, "assert": [{"type": "contains", "value": want}]})
                    + "\n")
    cfg = tmp_path / "suite.yaml"
    cfg.write_text("prompts: ['{{q}}']\nproviders: [echo]\ntests: file://rows.jsonl\n")
    return cfg


def _shards(tmp_path: Path, ext: str) -> list[str]:
    """Two `--shard K/2` runs, each with `-o sK.EXT` (and its own results file)."""
    cfg = _suite(tmp_path)
    outs = []
    for k in (1, 2):
        out = tmp_path / f"s{k}{ext}"
        main(["eval", str(cfg), "--shard", f"{k}/2", "-o", str(out), "--no-table", "--no-progress-bar",
              "--no-history", "--results-file", str(tmp_path / f"results{k}.jsonl")])
        outs.append(str(out))
    return outs


@pytest.mark.parametrize("ext", [".json", ".jsonl"])
def test_merge_of_json_and_jsonl_reports_counts_every_case(
        tmp_path: Path, ext: str, capsys: pytest.CaptureFixture[str]) -> None:
    shards = _shards(tmp_path, ext)
    capsys.readouterr()
    code = main(["merge", *shards, "--no-table", "--results-file", str(tmp_path / "m.jsonl"),
                 "-o", str(tmp_path / "m.json")])
    assert code == 100  # 8 cases fail
    summary = json.loads((tmp_path / "m.json").read_text())["summary"]
    assert (summary["total"], summary["passed"], summary["failed"]) == (ROWS, 32, 8)
    indices = [json.loads(line)["index"] for line in (tmp_path / "m.jsonl").read_text().splitlines()]
    assert indices == list(range(ROWS))
    assert "32 passed, 8 failed, 0 errors of 40 cases" in capsys.readouterr().out


def test_merge_of_the_results_files_equals_the_merge_of_the_json_reports(tmp_path: Path) -> None:
    shards = _shards(tmp_path, ".json")
    main(["merge", *shards, "--no-table", "--results-file", str(tmp_path / "a.jsonl")])
    main(["merge", str(tmp_path / "results1.jsonl"), str(tmp_path / "results2.jsonl"), "--no-table",
          "--results-file", str(tmp_path / "b.jsonl")])

    def ids(p: Path) -> list[str]:
        return [json.loads(line)["id"] for line in p.read_text().splitlines()]

    assert ids(tmp_path / "a.jsonl") == ids(tmp_path / "b.jsonl") and len(ids(tmp_path / "a.jsonl")) == ROWS


@pytest.mark.parametrize(("ext", "what"), [(".csv", "a CSV report"), (".xml", "a JUnit XML report"),
                                           (".html", "an HTML report")])
def test_merge_report_compare_and_filter_refuse_partial_reports(
        tmp_path: Path, ext: str, what: str, capsys: pytest.CaptureFixture[str]) -> None:
    shards = _shards(tmp_path, ext)
    capsys.readouterr()
    assert main(["merge", *shards, "--no-table", "--results-file", str(tmp_path / "m.jsonl")]) == 2
    err = capsys.readouterr().err
    assert f"'{shards[0]}' is {what}" in err and "--results-file" in err and "-o .json" in err
    assert main(["report", shards[0], "-o", str(tmp_path / "r.html")]) == 2
    assert f"'{shards[0]}' is {what}" in capsys.readouterr().err
    assert main(["compare", shards[0], shards[1], "--format", "json"]) == 2
    assert f"'{shards[0]}' is {what}" in capsys.readouterr().err
    assert main(["eval", str(tmp_path / "suite.yaml"), "--filter-failing", shards[0], "--no-table",
                 "--no-progress-bar", "--no-history"]) == 2
    assert f"'{shards[0]}' is {what}" in capsys.readouterr().err


def test_a_broken_line_inside_a_results_file_is_an_error_at_its_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _shards(tmp_path, ".json")
    lines = (tmp_path / "results1.jsonl").read_text().splitlines(keepends=True)
    lines[3] = lines[3][:20] + "\n"
    (tmp_path / "broken.jsonl").write_text("".join(lines))
    assert main(["merge", str(tmp_path / "broken.jsonl"), str(tmp_path / "results2.jsonl"), "--no-table",
                 "--results-file", str(tmp_path / "m.jsonl")]) == 2
    assert f"{tmp_path / 'broken.jsonl'}:4: not a JSON result record" in capsys.readouterr().err
    (tmp_path / "torn.jsonl").write_text("".join(lines[:3]) + lines[4][:30])  # a torn last line is dropped
    assert main(["merge", str(tmp_path / "torn.jsonl"), "--no-table", "--results-file",
                 str(tmp_path / "t.jsonl")]) in (0, 100)
    assert len((tmp_path / "t.jsonl").read_text().splitlines()) == 3


def test_report_rebuilds_reports_from_a_json_report(tmp_path: Path) -> None:
    shards = _shards(tmp_path, ".json")
    assert main(["report", shards[0], "-o", str(tmp_path / "again.json")]) == 0
    again = json.loads((tmp_path / "again.json").read_text())
    assert again["summary"]["total"] == ROWS // 2
    assert [r["id"] for r in again["results"]] == [r["id"] for r in json.loads(Path(shards[0]).read_text())["results"]]
