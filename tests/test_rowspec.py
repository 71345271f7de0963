"""Streamed rows -> TestSpecs (config/rowspec.py): the lean path and the memoised schema check agree with the
general path and the full check, row for row."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import pytest

from evalrun.config.rowspec import RowSpecs, to_spec
from evalrun.config.schema import validate
from evalrun.config.testcases import Ctx, part_from_node
from evalrun.config.testcases import TestPart as Part
from evalrun.errors import ConfigError, Location

BASE: dict[str, Any] = {"vars": {"q": "question 1", "topic": "cats"},
                        "assert": [{"type": "contains", "value": "question"},
                                   {"type": "icontains", "value": "CATS", "weight": 2},
                                   {"type": "regex", "value": "q\\w+", "threshold": 0.5}]}

#: Values that stress the schema's types (bool is not a number, 1.0 is not 1 as JSON, NaN, containers).
ODD = [None, True, False, 0, 1, 1.0, -3, 2.5, 1e12, float("nan"), "", "x", [], ["a"], {}, {"k": 1}]


def _paths(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [path]
    if isinstance(node, dict):
        for k, v in node.items():
            out += _paths(v, (*path, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _paths(v, (*path, i))
    return out


def _mutate(row: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """`row` with one node replaced, one key added or one key removed."""
    row = copy.deepcopy(row)
    path = rng.choice(_paths(row)[1:])
    parent = row
    for p in path[:-1]:
        parent = parent[p]
    what = rng.random()
    if what < 0.6:
        parent[path[-1]] = copy.deepcopy(rng.choice(ODD))
    elif what < 0.8 and isinstance(parent, dict):
        parent[rng.choice(["extra", "weight", "threshold", "metric", "config", "options", "metadata",
                           "providers", "description", "assert"])] = copy.deepcopy(rng.choice(ODD))
    elif isinstance(parent, dict):
        parent.pop(path[-1])
    return row


def _full_check(row: dict[str, Any]) -> str | None:
    """The general path's error for `row` as line 2 of a file: the full schema check, then part_from_node."""
    row = copy.deepcopy(row)
    try:
        validate(row, file="t.jsonl", definition="test", prefix="[1]", line=2)
        part_from_node(row, Ctx("/tmp"), loc=Location("t.jsonl", 2), key="[1]")
    except ConfigError as e:
        return str(e)
    return None


def _built(row: dict[str, Any], *, check: bool, previous: dict[str, Any] = BASE) -> Any:
    """`row` built as the second row of a pass whose first row is `previous`."""
    rows = RowSpecs("/tmp", None)
    rows.spec(copy.deepcopy(previous), 0, Location("t.jsonl", 1), "[0]", check=check)
    return rows.spec(row, 1, Location("t.jsonl", 2), "[1]", check=check)


def test_the_memoised_check_rejects_exactly_what_the_full_check_rejects() -> None:
    rng = random.Random(14)
    rejected = 0
    for _ in range(600):
        row = _mutate(BASE, rng)
        if rng.random() < 0.5:  # mutate elsewhere but keep the previous row's assert list (the memo's case)
            row["assert"] = copy.deepcopy(BASE["assert"])
        expected = _full_check(row)
        try:
            _built(copy.deepcopy(row), check=True)
            got = None
        except ConfigError as e:
            got = str(e)
        rejected += expected is not None
        assert got == expected, row
    assert rejected > 100  # the mutations do reach the schema's rules


def _fields(spec: Any) -> tuple[Any, ...]:
    asserts = tuple((a.type, a.negate, repr(a.value), a.threshold, a.weight, a.loc, a.key_path)
                    for a in spec.asserts)
    return (spec.index, spec.description, spec.vars, asserts, spec.options, spec.threshold, spec.metadata,
            spec.providers, spec.prompts, spec.loc, spec.key_path)


@pytest.mark.parametrize("row", [
    BASE,
    {**BASE, "description": "d"},
    {**BASE, "assert": [{"type": "equals", "value": 1}]},  # 1 == True in Python, not in JSON
    {**BASE, "assert": [{"type": "equals", "value": True}]},
    {**BASE, "assert": [{"type": "equals", "value": 1.0}]},
    {**BASE, "assert": [{"type": "equals", "value": "1"}]},
    {**BASE, "assert": [{"type": "contains", "value": "question"}]},
    {**BASE, "options": {"transform": "output.upper()"}, "threshold": 0.5, "metadata": {"m": 1}},
    {"assert": BASE["assert"]},
    {"vars": {"q": "x"}},
])
@pytest.mark.parametrize("previous", [BASE, {**BASE, "assert": [{"type": "equals", "value": 1}]},
                                      {**BASE, "assert": [{"type": "equals", "value": "1"}]}])
@pytest.mark.parametrize("default", [None, Part(vars={"d": 1}, options={"o": 1})])
def test_the_lean_path_builds_what_the_general_path_builds(row: dict[str, Any], previous: dict[str, Any],
                                                           default: Part | None) -> None:
    from evalrun.config.merge import merge_tests

    rows = RowSpecs("/tmp", default)
    rows.spec(copy.deepcopy(previous), 0, Location("t.jsonl", 1), "[0]")
    lean = rows.spec(copy.deepcopy(row), 1, Location("t.jsonl", 2), "[1]")
    part = part_from_node(copy.deepcopy(row), Ctx("/tmp"), loc=Location("t.jsonl", 2), key="[1]")
    assert _fields(lean) == _fields(to_spec(merge_tests(default, part), 1))


def test_a_repeated_list_reuses_handlers_but_each_row_keeps_its_location() -> None:
    rows = RowSpecs("/tmp", None)
    specs = [rows.spec(copy.deepcopy(BASE), i, Location("t.jsonl", i + 1), f"[{i}]") for i in range(3)]
    assert [s.asserts[2].key_path for s in specs] == ["[0].assert[2]", "[1].assert[2]", "[2].assert[2]"]
    assert [s.asserts[0].loc.line for s in specs] == [1, 2, 3]  # type: ignore[union-attr]
    assert specs[0].asserts[1].handler is specs[2].asserts[1].handler
    assert specs[2].asserts[1].weight == 2 and specs[2].asserts[2].threshold == 0.5


def test_a_row_reading_a_file_is_read_again(tmp_path: Path) -> None:
    (tmp_path / "expected.txt").write_text("one")
    row = {"assert": [{"type": "equals", "value": "file://expected.txt"}]}
    rows = RowSpecs(str(tmp_path), None)
    first = rows.spec(copy.deepcopy(row), 0, Location("t.jsonl", 1), "[0]")
    (tmp_path / "expected.txt").write_text("two")
    second = rows.spec(copy.deepcopy(row), 1, Location("t.jsonl", 2), "[1]")
    assert (first.asserts[0].value, second.asserts[0].value) == ("one", "two")


def test_a_bad_row_after_good_ones_names_its_own_line(tmp_path: Path) -> None:
    from evalrun import config

    good = json.dumps(BASE)
    bad = json.dumps({**BASE, "vars": 3})
    (tmp_path / "t.jsonl").write_text("\n".join([good, good, bad, good]) + "\n")
    (tmp_path / "c.yaml").write_text("providers: [echo]\nprompts: ['{{q}} {{topic}}']\ntests: file://t.jsonl\n")
    with pytest.raises(ConfigError) as e:
        config.load([str(tmp_path / "c.yaml")])
    assert e.value.line == 3 and e.value.key == "[2].vars"
