"""Streamed JSONL/CSV test files: same tests as an inline list, every row checked with its line, re-iterable."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from evalrun import config, expand
from evalrun.cli import main
from evalrun.config.tests import TestList
from evalrun.errors import ConfigError

ROWS = [{"description": f"t{i}", "vars": {"q": f"question {i}", "topic": ["a", "b"] if i == 2 else "x"},
         "assert": [{"type": "contains", "value": "question"}, {"type": "icontains", "value": f"{i}"}]}
        for i in range(5)]
HEAD = "providers: [echo]\nprompts: ['Say {{q}} / {{topic}}']\n"


def _suite_files(tmp_path: Path) -> tuple[Path, Path]:
    (tmp_path / "tests.jsonl").write_text("\n".join(json.dumps(r) for r in ROWS) + "\n\n")
    streamed = tmp_path / "streamed.yaml"
    streamed.write_text(HEAD + "defaultTest: {vars: {extra: 1}}\ntests: file://tests.jsonl\n")
    inline = tmp_path / "inline.yaml"
    inline.write_text(HEAD + "defaultTest: {vars: {extra: 1}}\ntests: " + json.dumps(ROWS) + "\n")
    return streamed, inline


def _cases(suite: config.Suite) -> list[tuple[str, str, dict[str, object], tuple[str, ...]]]:  # type: ignore[name-defined]
    return [(c.id, c.test.description or "", c.vars, tuple(a.full_type for a in c.test.asserts))
            for c in expand.iter_cases(suite)]


def test_jsonl_stream_gives_the_same_cases_as_inline_tests(tmp_path: Path) -> None:
    streamed, inline = _suite_files(tmp_path)
    s, i = config.load([str(streamed)]), config.load([str(inline)])
    assert isinstance(s.tests, TestList) and isinstance(i.tests, tuple)
    assert _cases(s) == _cases(i)
    assert expand.count_cases(s) == expand.count_cases(i) == 6  # row 2 expands its topic list
    assert len(s.tests) == 5 and [t.index for t in s.tests] == [0, 1, 2, 3, 4]
    assert _cases(s) == _cases(s)  # each pass reads the file again and yields the same tests
    assert s.tests[3].loc is not None and s.tests[3].loc.line == 4  # a row's location is its line
    assert s.tests[1].vars["extra"] == 1  # defaultTest merged on the fly


def test_equal_assertions_share_one_handler_but_keep_their_own_location(tmp_path: Path) -> None:
    streamed, _ = _suite_files(tmp_path)
    tests = list(config.load([str(streamed)]).tests)
    first, second = tests[0].asserts[0], tests[1].asserts[0]
    assert first.handler is second.handler
    assert (first.loc.line, second.loc.line) == (1, 2)  # type: ignore[union-attr]
    assert first.key_path == "[0].assert[0]" and second.key_path == "[1].assert[0]"
    assert tests[0].asserts[1].handler is not tests[1].asserts[1].handler  # different values


@pytest.mark.parametrize(("line", "row", "expected"), [
    (3, '{"vars": {"q": 1}, "assert": [{"type": "containz", "value": "x"}]}', "unknown assertion type 'containz'"),
    (3, '{"vars": {"q": 1}, "asert": []}', "asert"),
    (3, '{"vars": {"q": 1}', "invalid JSON on this line"),
    (3, '[1, 2]', "expected a test mapping"),
])
def test_every_row_is_checked_with_its_line(tmp_path: Path, line: int, row: str, expected: str) -> None:
    good = json.dumps({"vars": {"q": "a"}})
    (tmp_path / "t.jsonl").write_text(f"{good}\n\n{row}\n{good}\n")
    cfg = tmp_path / "c.yaml"
    cfg.write_text("providers: [echo]\nprompts: ['{{q}}']\ntests: file://t.jsonl\n")
    with pytest.raises(ConfigError) as e:
        config.load([str(cfg)])
    assert Path(e.value.file or "").name == "t.jsonl" and e.value.line == line
    assert expected in str(e.value)


def test_undefined_prompt_var_names_the_row(tmp_path: Path) -> None:
    (tmp_path / "t.jsonl").write_text('{"vars": {"question": "a"}}\n\n{"vars": {"questoin": 1}}\n')
    cfg = tmp_path / "c.yaml"
    cfg.write_text("providers: [echo]\nprompts: ['{{question}}']\ntests: file://t.jsonl\n")
    with pytest.raises(ConfigError) as e:  # reported at the prompt's line, naming the row's line
        config.load([str(cfg)])
    assert "undefined template variable 'question'" in str(e.value) and "t.jsonl:3" in str(e.value)


def test_csv_stream_rows_and_errors(tmp_path: Path) -> None:
    (tmp_path / "t.csv").write_text(textwrap.dedent("""\
        q,__expected1,__expected2
        one,contains:one,icontains:ONE
        "two, quoted",contains:two,icontains:TWO
        """))
    cfg = tmp_path / "c.yaml"
    cfg.write_text("providers: [echo]\nprompts: ['{{q}}']\ntests: file://t.csv\n")
    suite = config.load([str(cfg)])
    tests = list(suite.tests)
    assert [t.vars["q"] for t in tests] == ["one", "two, quoted"]
    assert [t.loc.line for t in tests] == [2, 3]  # type: ignore[union-attr]
    assert tests[0].asserts[0].handler is tests[0].asserts[0].handler
    with open(tmp_path / "t.csv", "a") as f:
        f.write("three,contains:three\n")  # one cell short
    with pytest.raises(ConfigError) as e:
        config.load([str(cfg)])
    assert (Path(e.value.file or "").name, e.value.line) == ("t.csv", 4) and "2 cells" in str(e.value)


def test_eval_and_validate_on_a_streamed_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    streamed, _ = _suite_files(tmp_path)
    assert main(["validate", str(streamed), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["tests"] == 5 and summary["cases"] == 6 and summary["assertions"] == 10
    results = tmp_path / "r.jsonl"
    code = main(["eval", str(streamed), "--no-progress-bar", "--no-table", "--results-file", str(results)])
    recs = [json.loads(line) for line in results.read_text().splitlines()]
    assert code == 0 and len(recs) == 6 and all(r["status"] == "pass" for r in recs)
    assert sorted(r["index"] for r in recs) == list(range(6))


def test_scenarios_read_a_streamed_file_whole(tmp_path: Path) -> None:
    (tmp_path / "t.jsonl").write_text('{"vars": {"q": "a"}}\n{"vars": {"q": "b"}}\n')
    cfg = tmp_path / "c.yaml"
    cfg.write_text("providers: [echo]\nprompts: ['{{q}} {{lang}}']\n"
                   "scenarios:\n  - config: [{vars: {lang: en}}, {vars: {lang: fr}}]\n    tests: file://t.jsonl\n")
    suite = config.load([str(cfg)])
    assert [(t.vars["lang"], t.vars["q"]) for t in suite.tests] == [("en", "a"), ("en", "b"), ("fr", "a"),
                                                                    ("fr", "b")]


def test_loading_reports_progress(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    from evalrun.config import suite as suite_mod
    from evalrun.run.progress import LoadProgress

    streamed, _ = _suite_files(tmp_path)
    monkeypatch.setattr(suite_mod, "PROGRESS_EVERY", 2)
    seen: list[int] = []
    config.load([str(streamed)], on_progress=seen.append)
    assert seen == [2, 4]
    out = io.StringIO()
    shown = LoadProgress(True, out)
    shown(20000)
    shown.done()
    assert "checking tests: 20,000" in out.getvalue()
    quiet = io.StringIO()
    LoadProgress(False, quiet)(5)
    assert quiet.getvalue() == ""


def test_a_row_nested_too_deeply_is_an_error_at_its_line(tmp_path: Path) -> None:
    deep = '{"vars": {"q": "a", "x": ' + "[" * 150 + "]" * 150 + "}}"
    (tmp_path / "t.jsonl").write_text('{"vars": {"q": "a"}}\n' + deep + "\n")
    cfg = tmp_path / "c.yaml"
    cfg.write_text("providers: [echo]\nprompts: ['{{q}}']\ntests: file://t.jsonl\n")
    with pytest.raises(ConfigError) as e:
        config.load([str(cfg)])
    assert e.value.line == 2 and "nested more than" in str(e.value)


ROW: dict[str, Any] = {"vars": {"q": "question 1", "topic": "cats"},
                       "assert": [{"type": "contains", "value": "question"},
                                  {"type": "icontains", "value": "CATS", "weight": 2},
                                  {"type": "regex", "value": "q\\w+", "threshold": 0.5}]}


def _rows_suite(tmp_path: Path, rows: list[dict[str, Any]]) -> Path:
    (tmp_path / "t.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    path = tmp_path / "c.yaml"
    path.write_text("providers: [echo]\nprompts: ['{{q}} {{topic}}']\ntests: file://t.jsonl\n")
    return path


def test_a_repeated_list_shares_handlers_but_each_row_keeps_its_location(tmp_path: Path) -> None:
    specs = list(config.load([str(_rows_suite(tmp_path, [ROW] * 3))]).tests)
    assert [s.asserts[2].key_path for s in specs] == ["[0].assert[2]", "[1].assert[2]", "[2].assert[2]"]
    assert [s.asserts[0].loc.line for s in specs] == [1, 2, 3]  # type: ignore[union-attr]
    assert specs[0].asserts[1].handler is specs[2].asserts[1].handler
    assert specs[2].asserts[1].weight == 2 and specs[2].asserts[2].threshold == 0.5


def test_a_row_reading_a_file_reads_it_again_on_each_pass(tmp_path: Path) -> None:
    (tmp_path / "expected.txt").write_text("one")
    suite = config.load([str(_rows_suite(tmp_path, [{"vars": {"q": "a", "topic": "b"},
                                               "assert": [{"type": "equals", "value": "file://expected.txt"}]}]))])
    first = next(iter(suite.tests))
    (tmp_path / "expected.txt").write_text("two")
    second = next(iter(suite.tests))
    assert (first.asserts[0].value, second.asserts[0].value) == ("one", "two")


def test_a_bad_row_after_good_ones_names_its_own_line(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as e:
        config.load([str(_rows_suite(tmp_path, [ROW, ROW, {**ROW, "vars": 3}, ROW]))])
    assert e.value.line == 3 and e.value.key == "[2].vars"
