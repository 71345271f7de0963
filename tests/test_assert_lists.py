"""asserts.build_list's previous-list path (a list like the one built before it, items equal or differing only
in a string `value`, reuses its specs): exactly the specs of a list built from scratch, each with its own
location and key path, and a differing value's own handler (which checks it)."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest

from evalrun import config
from evalrun.config import asserts
from evalrun.errors import ConfigError, Location

LISTS: list[list[dict[str, Any]]] = [
    [{"type": "contains", "value": "number 1"}, {"type": "icontains", "value": "{{topic}}"}],
    [{"type": "contains", "value": "number 2"}, {"type": "icontains", "value": "{{topic}}"}],  # one value differs
    [{"type": "contains", "value": "number 2"}, {"type": "icontains", "value": "{{topic}}"}],  # equal
    [{"type": "not-contains", "value": "number 2"}, {"type": "icontains", "value": "{{topic}}"}],  # a type
    [{"type": "not-contains", "value": "x", "metric": "m"}, {"type": "icontains", "value": "{{topic}}"}],
    [{"type": "not-contains", "value": "y", "metric": "n"}, {"type": "icontains", "value": "{{topic}}"}],
    [{"type": "not-contains", "value": "y", "metric": "n"}],  # shorter
    [{"type": "equals", "value": "1"}],
    [{"type": "equals", "value": 1}],  # a number where a string was: not the string's spec
    [{"type": "equals", "value": 1.0}],
    [{"type": "equals", "value": True}],
    [{"type": "equals", "value": "1", "weight": 2}],
    [{"type": "equals", "value": "1", "weight": 2.0}],
    [{"type": "equals", "value": "2", "weight": 2.0}],
    [{"type": "equals", "value": "file://value.txt"}],  # a file: read, never reused
    [{"type": "equals", "value": "file://value.txt"}],
    [{"type": "equals", "value": "3"}],
    [{"type": "equals", "value": "3", "metric": "m"}],
    [{"type": "equals", "transform": "m", "value": "3"}],  # same length, another key
    [{"type": "equals", "transform": "m", "value": "4"}],
]


def _fields(spec: Any) -> dict[str, Any]:
    out = {f.name: getattr(spec, f.name) for f in fields(spec) if f.name != "handler"}
    out["value class"] = type(spec.value)
    out["handler"] = (type(spec.handler), getattr(spec.handler, "value", None))
    return out


def _clear() -> None:
    asserts.forget_previous()
    asserts._BUILT.clear()


def test_lists_built_in_turn_are_the_lists_built_alone(tmp_path: Path) -> None:
    (tmp_path / "value.txt").write_text("from the file", encoding="utf-8")
    base = str(tmp_path)
    _clear()
    in_turn = [asserts.build_list(items, base_dir=base, loc=Location("c.yaml", i + 1), key=f"tests[{i}]")
               for i, items in enumerate(LISTS)]
    for i, items in enumerate(LISTS):
        _clear()
        alone = asserts.build_list(items, base_dir=base, loc=Location("c.yaml", i + 1), key=f"tests[{i}]")
        assert [_fields(s) for s in in_turn[i]] == [_fields(s) for s in alone], i
    assert in_turn[1][0].value == "number 2" and in_turn[1][0].handler is not in_turn[0][0].handler
    assert in_turn[1][1].handler is in_turn[0][1].handler  # the equal item shares its handler
    assert in_turn[1][0].key_path == "tests[1].assert[0]" and in_turn[1][0].loc == Location("c.yaml", 2)
    assert in_turn[8][0].value == 1 and type(in_turn[10][0].value) is bool
    assert in_turn[15][0].value == "from the file"


def test_a_differing_value_is_checked_and_named_by_its_own_key() -> None:
    _clear()
    asserts.build_list([{"type": "regex", "value": "a+"}, {"type": "contains", "value": "b"}], base_dir=".",
                       loc=Location("c.yaml", 3), key="tests[0]")
    with pytest.raises(ConfigError) as err:
        asserts.build_list([{"type": "regex", "value": "("}, {"type": "contains", "value": "b"}], base_dir=".",
                           loc=Location("c.yaml", 9), key="tests[1]")
    assert err.value.key == "tests[1].assert[0].value" and err.value.line == 9


def test_inline_yaml_tests_keep_each_assertion_line(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("providers: [echo]\nprompts: ['{{q}}']\ntests:\n"
                    "  - vars: {q: a}\n    assert:\n      - type: contains\n        value: a\n"
                    "      - type: icontains\n        value: '{{q}}'\n"
                    "  - vars: {q: b}\n    assert:\n      - type: contains\n        value: b\n"
                    "      - type: icontains\n        value: '{{q}}'\n", encoding="utf-8")
    suite = config.load([str(path)])
    lines = [[(s.loc.line if s.loc else 0, s.key_path, s.value) for s in t.asserts] for t in suite.tests]
    assert lines == [[(6, "tests[0].assert[0]", "a"), (8, "tests[0].assert[1]", "{{q}}")],
                     [(12, "tests[1].assert[0]", "b"), (14, "tests[1].assert[1]", "{{q}}")]]
    assert suite.tests[1].vars == {"q": "b"} and suite.tests[1].loc == Location(str(path), 10)


def test_a_bad_value_in_a_later_yaml_test_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    tests = "".join(f"  - vars: {{q: a}}\n    assert:\n      - type: regex\n        value: '{rx}'\n"
                    for rx in ("a+", "b+", "("))
    path.write_text("providers: [echo]\nprompts: ['{{q}}']\ntests:\n" + tests, encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        config.load([str(path)])
    assert err.value.key == "tests[2].assert[0].value" and err.value.line == 15


def test_to_spec_copies_every_field_of_a_part() -> None:
    from evalrun.config.tests import TestPart, to_spec
    from evalrun.types import TestSpec

    part = TestPart(description="d", vars={"a": 1}, options={"x": 1}, threshold=0.5, metadata={"m": 2},
                    providers=("p",), prompts=("q",), loc=Location("c.yaml", 4), key_path="tests[0]")
    spec = to_spec(part, 7)
    assert spec == TestSpec(index=7, description="d", vars={"a": 1}, asserts=(), options={"x": 1}, threshold=0.5,
                            metadata={"m": 2}, providers=("p",), prompts=("q",), loc=Location("c.yaml", 4),
                            key_path="tests[0]")
    assert type(spec.asserts) is tuple and repr(spec).startswith("TestSpec(index=7,")


INLINE = """\
tests:
  - description: one
    vars: {q: a, n: 1}
    assert:
      - type: contains
        value: a
      - {type: icontains, value: '{{q}}'}
  - vars: {q: b}
    assert:
      - type: contains
        value: b
      - {type: icontains, value: '{{q}}'}
  - vars: {q: b}
    assert:
      - type: contains
        value: b
      - {type: icontains, value: '{{q}}'}
  - vars: {q: 'file://v.txt'}
    assert: [{type: contains, value: c}, {type: icontains, value: '{{q}}'}]
  - vars: {q: d}
    threshold: 0.5
    assert: [{type: contains, value: d}, {type: icontains, value: '{{q}}', weight: 2}]
  - description: no asserts
  - vars: {q: e}
    assert: [{type: equals, value: 1}, {type: icontains, value: '{{q}}'}]
  - assert: [{type: contains, value: f}, {type: icontains, value: '{{q}}'}]
"""


def _part(part: Any) -> dict[str, Any]:
    out = dict(part.__dict__)
    out["asserts"] = [_fields(s) for s in part.asserts]
    return out


@pytest.mark.parametrize("plain", [False, True])
def test_inline_tests_collected_are_part_from_node_of_each(plain: bool, tmp_path: Path) -> None:
    """collect gives, test by test, what part_from_node gives for the same mapping alone (`plain`: the tests as
    plain dicts and lists, as a Python generator returns them)."""
    import json

    from evalrun.config import tests as test_sources
    from evalrun.config.readers.yamldoc import parse_yaml
    from evalrun.config.tests import part_from_node

    (tmp_path / "v.txt").write_text("from the file", encoding="utf-8")
    doc = parse_yaml(INLINE, "c.yaml")
    tests = json.loads(json.dumps(doc["tests"])) if plain else doc["tests"]
    base_dir = str(tmp_path)
    _clear()
    collected = test_sources.collect(tests, base_dir, key="tests", loc=doc.loc("tests"))
    locs = asserts.item_locs(tests, doc.loc("tests"))
    for i, node in enumerate(tests):
        _clear()
        alone = part_from_node(node, base_dir, loc=locs[i], key=f"tests[{i}]")
        assert _part(collected[i]) == _part(alone), i
    assert collected[3].vars == {"q": "from the file"}
    if not plain:
        assert collected[1].loc == Location("c.yaml", 8)
        assert [s.loc.line for s in collected[2].asserts if s.loc] == [15, 17]


@pytest.mark.parametrize("bad, key, line", [
    ("  - vars: {q: x}\n    assert: [{type: contains, value: ''}]\n", "tests[3].assert[0].value", 11),
    ("  - vars: [1, 2]\n    assert: [{type: contains, value: a}]\n", "tests[3].vars", 10),
    ("  - vars: {q: x}\n    assert: [{type: contains, value: b}, {type: icontains}]\n",
     "tests[3].assert[1].value", 11),
])
def test_an_error_in_a_lean_inline_test_is_the_general_paths(bad: str, key: str, line: int,
                                                              tmp_path: Path) -> None:
    """The same error (message, key, line) whether the test follows lean tests or stands alone."""
    head = "providers: [echo]\nprompts: ['{{q}}']\ntests:\n"
    lean = "".join(f"  - vars: {{q: v{i}}}\n    assert: [{{type: contains, value: a}}, {{type: contains, value: b}}]\n"
                   for i in range(3))
    errors = []
    for body in (lean + bad, "\n\n\n\n\n\n" + bad.replace("tests[3]", "tests[0]")):
        path = tmp_path / "c.yaml"
        path.write_text(head + body, encoding="utf-8")
        _clear()
        with pytest.raises(ConfigError) as err:
            config.load([str(path)])
        errors.append(err.value)
    follow, alone = errors
    assert (follow.key, follow.line) == (key, line)
    assert str(follow).split(": ", 1)[1].replace("tests[3]", "tests[0]") == \
        str(alone).split(": ", 1)[1].replace("tests[3]", "tests[0]")
