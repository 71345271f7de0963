"""CSV tests and promptfoo's `__expected` shorthand."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalrun.config import csvtests, load
from evalrun.config.csvtests import from_shorthand, row_to_test
from evalrun.errors import ConfigError

NAMES = ("contains", "icontains", "contains-any", "regex", "rouge-n", "llm-rubric", "equals", "is-json",
         "starts-with", "levenshtein", "python", "javascript")


@pytest.mark.parametrize(("text", "expected"), [
    ("contains:Paris", {"type": "contains", "value": "Paris"}),
    ("not-regex:^\\d+$", {"type": "not-regex", "value": "^\\d+$"}),
    ("rouge-n(0.8):the capital", {"type": "rouge-n", "value": "the capital", "threshold": 0.8}),
    ("not-levenshtein(3):abc", {"type": "not-levenshtein", "value": "abc", "threshold": 3.0}),
    ("Time: 10:30", {"type": "equals", "value": "Time: 10:30"}),
    ("time: 10:30", {"type": "equals", "value": "time: 10:30"}),
    ("note(2): keep", {"type": "equals", "value": "note(2): keep"}),
    ("ruby", {"type": "equals", "value": "ruby"}),
    ("contains-any:a, b ,c", {"type": "contains-any", "value": ["a", "b", "c"]}),
    ("llm-rubric: is polite", {"type": "llm-rubric", "value": "is polite"}),
    ("grade: is polite", {"type": "llm-rubric", "value": "is polite"}),
    ("python: output == 'x'", {"type": "python", "value": "output == 'x'"}),
    ("javascript: output.length > 2", {"type": "javascript", "value": "output.length > 2"}),
    ("fn: output.length > 2", {"type": "javascript", "value": "output.length > 2"}),
    ("file://check.py:fn", {"type": "python", "value": "file://check.py:fn"}),
    ("file://check.js", {"type": "javascript", "value": "file://check.js"}),
    ("file://check.MJS", {"type": "javascript", "value": "file://check.MJS"}),  # promptfoo: any case for JS
    ("file://check.PY", {"type": "equals", "value": "file://check.PY"}),  # ... `.py` in lower case only
    ("is-json", {"type": "is-json"}),
    ("Paris", {"type": "equals", "value": "Paris"}),
    ("Paris: the capital", {"type": "equals", "value": "Paris: the capital"}),
    ("contains-anything:x", {"type": "equals", "value": "contains-anything:x"}),
    ("starts-with:multi\nline", {"type": "starts-with", "value": "multi\nline"}),
])
def test_shorthand(text: str, expected: dict[str, object]) -> None:
    assert from_shorthand(text, NAMES) == expected


@pytest.mark.parametrize(("text", "fragment", "hint"), [
    ("search-rubric:polite", "search-rubric is a promptfoo assertion type", "llm-rubric"),
    ("classifier(0.5):x", "does not support", "evalrun list"),
    ("levenstein(3):abc", "unknown assertion type 'levenstein'", "did you mean `levenshtein`?"),
])
def test_shorthand_for_a_type_evalrun_lacks_is_an_error(text: str, fragment: str, hint: str) -> None:
    with pytest.raises(ConfigError) as e:
        from_shorthand(text, NAMES, file="t.csv", line=3, key="__expected")
    assert fragment in e.value.message and hint in (e.value.hint or "")
    assert (e.value.file, e.value.line) == ("t.csv", 3)


def test_csv_similar_and_factuality_shorthands_build_those_types(tmp_path: Path) -> None:
    (tmp_path / "t.csv").write_text("q,__expected\nhi,contains:h\nyo,similar(0.8):hello world\n"
                                    "ho,factuality:Paris\n", encoding="utf-8")
    (tmp_path / "c.yaml").write_text("prompts: ['{{q}}']\nproviders: [echo]\ntests: t.csv\n", encoding="utf-8")
    suite = load([str(tmp_path / "c.yaml")])
    similar, factuality = suite.tests[1].asserts[0], suite.tests[2].asserts[0]
    assert (similar.type, similar.value, similar.threshold) == ("similar", "hello world", 0.8)
    assert (factuality.type, factuality.value) == ("factuality", "Paris")


def test_shorthand_prefixes_map_to_registered_types() -> None:
    from evalrun.assertions import registry

    names = tuple(registry.names())
    for text in ("contains:x", "not-contains:x", "icontains-all:a,b", "llm-rubric:polite", "grade:polite",
                 "python:output == 'x'", "javascript:output", "file://c.py", "file://c.js", "rouge-n(0.5):x",
                 "levenshtein(2):x", "is-json", "not-is-refusal", "regex:^a", "starts-with:a", "Time: 10:30"):
        full = str(from_shorthand(text, names)["type"])
        assert registry.get(full.removeprefix("not-")) is not None, text


def test_special_columns(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text(
        "question,__expected1,__expected2,__description,__prefix,__suffix,__metric,__threshold,"
        "__metadata:team,__metadata:tags[]\n"
        'What?,contains:a,"icontains:B",first,<,>,acc,0.5,core,"x, y"\n'
        "\n"
        "Why?,,,,,,,,,\n", encoding="utf-8")
    rows = read_rows(path, "t.csv")
    assert [r.line for r in rows] == [2, 4]
    t = row_to_test(rows[0], "t.csv", NAMES)
    assert t == {"vars": {"question": "What?"}, "description": "first", "options": {"prefix": "<", "suffix": ">"},
                 "threshold": 0.5, "metadata": {"team": "core", "tags": ["x", "y"]},
                 "assert": [{"type": "contains", "value": "a", "metric": "acc"},
                            {"type": "icontains", "value": "B", "metric": "acc"}]}
    assert row_to_test(rows[1], "t.csv", NAMES) == {"vars": {"question": "Why?"}}


def test_multiline_cells_keep_the_row_start_line(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text('q,a\n"line one\nline two",x\nsecond,y\n"bad,z\n', encoding="utf-8")
    with pytest.raises(ConfigError) as e:
        read_rows(path, "t.csv")
    assert e.value.file == "t.csv" and e.value.line >= 4
    path.write_text('q,a\n"line one\nline two",x\nsecond,y\n', encoding="utf-8")
    assert [r.line for r in read_rows(path, "t.csv")] == [2, 4]


def read_rows(path: Path, display: str) -> list[csvtests.CsvRow]:
    """A tests CSV's rows, as the tests reader reads them (promptfoo's `__` columns checked)."""
    with open(path, encoding="utf-8-sig", newline="") as f:
        return list(csvtests.iter_rows(f, display))


@pytest.mark.parametrize(("text", "line", "fragment"), [
    ("", 1, "empty"),
    ("q,\nx,y\n", 1, "column 2 has no name"),
    ("q,q\nx,y\n", 1, "duplicate column 'q'"),
    ("q,__descripton\nx,y\n", 1, "unknown special column"),
    ("q,a\nx,y\nonly-one\n", 3, "1 cells but the header has 2"),
])
def test_malformed_csv(tmp_path: Path, text: str, line: int, fragment: str) -> None:
    path = tmp_path / "t.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as e:
        read_rows(path, "t.csv")
    assert (e.value.file, e.value.line) == ("t.csv", line) and fragment in e.value.message


def test_csv_tests_through_the_loader_with_real_types(tmp_path: Path) -> None:
    (tmp_path / "t.csv").write_text("q,__expected\nhi,contains:h\nyo,not-icontains:Z\nbye,bye\n", encoding="utf-8")
    (tmp_path / "c.yaml").write_text("prompts: ['{{q}}']\nproviders: [echo]\ntests: t.csv\n", encoding="utf-8")
    suite = load([str(tmp_path / "c.yaml")])
    got = [(a.full_type, a.value, a.loc.line) for t in suite.tests for a in t.asserts]
    assert got == [("contains", "h", 2), ("not-icontains", "Z", 3), ("equals", "bye", 4)]
    assert suite.tests[0].asserts[0].loc.file.endswith("t.csv") and suite.tests[0].asserts[0].key_path == "assert[0]"


def test_csv_unknown_type_in_shorthand_is_equals_but_bad_args_are_errors(tmp_path: Path) -> None:
    (tmp_path / "t.csv").write_text("q,__expected\nhi,regex:([a-z\n", encoding="utf-8")
    (tmp_path / "c.yaml").write_text("prompts: ['{{q}}']\nproviders: [echo]\ntests: t.csv\n", encoding="utf-8")
    with pytest.raises(ConfigError) as e:
        load([str(tmp_path / "c.yaml")])
    assert e.value.file.endswith("t.csv") and e.value.line == 2 and "regular expression" in e.value.message


def test_csv_row_values_are_schema_checked_at_their_line(tmp_path: Path) -> None:
    (tmp_path / "t.csv").write_text("q,__threshold\na,0.5\nb,1.5\n", encoding="utf-8")
    (tmp_path / "c.yaml").write_text("prompts: ['{{q}}']\nproviders: [echo]\ntests: t.csv\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="1.5 is out of range") as e:
        load([str(tmp_path / "c.yaml")])
    assert e.value.file.endswith("t.csv") and e.value.line == 3 and e.value.key == "threshold"
