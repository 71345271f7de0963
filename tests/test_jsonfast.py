"""evalrun.jsonfast gives the json module's values and errors, faster."""

from __future__ import annotations

import dataclasses
import datetime
import json
import math

import pytest

from evalrun import jsonfast

TEXTS = [
    '{"vars": {"q": "caf\\u00e9 \\ud83d\\ude00", "n": 3, "f": 1.5, "b": true, "z": null}, "assert": []}',
    '{"big": 123456789012345678901234567890, "neg": -98765432109876543210}',
    '{"nan": NaN, "inf": Infinity, "ninf": -Infinity}',
    '["\\ud800 lone surrogate"]',
    '{"a": 1, "a": 2}',
    '{"phone": "+44 1234567890123456789"}',
    '[18446744073709551616, -9223372036854775809, 18446744073709551615, -9223372036854775808]',  # 64-bit edges
    '  [1e400]  ',
    '"plain"',
]


@pytest.mark.parametrize("text", TEXTS)
def test_loads_equals_json(text: str) -> None:
    want, got = json.loads(text), jsonfast.loads(text)
    assert repr(got) == repr(want)  # repr: NaN != NaN, and 1 == 1.0 would hide a float for an int
    assert repr(jsonfast.loads(text.encode("utf-8"))) == repr(want)


def test_huge_integer_stays_an_integer() -> None:
    assert jsonfast.loads('{"n": 123456789012345678901234567890}')["n"] == 123456789012345678901234567890


@pytest.mark.parametrize("text", ['{"a": }', '{"a": 1', "[1, 2,]", "", '{"a": "x"} trailing'])
def test_loads_errors_are_json_errors(text: str) -> None:
    with pytest.raises(json.JSONDecodeError) as want:
        json.loads(text)
    with pytest.raises(json.JSONDecodeError) as got:
        jsonfast.loads(text)
    assert (got.value.msg, got.value.pos) == (want.value.msg, want.value.pos)


@dataclasses.dataclass
class _Point:
    x: int


VALUES = [
    {"id": "abc", "score": 1.0, "vars": {"q": "é ✓ \u2028", "n": [1, 2, (3, 4)]}, "none": None},
    {1: "int key", None: "none key", 1.5: "float key"},
    {"big": 2**70, "small": -(2**70)},
    {"nan": math.nan, "inf": math.inf, "nested": [math.nan, {"x": -math.inf}]},
    {"obj": _Point(1), "when": datetime.datetime(2024, 1, 2, 3, 4, 5), "set": {1}},
]


@pytest.mark.parametrize("value", VALUES)
def test_dumps_reads_back_as_json_writes_it(value: object) -> None:
    want = json.loads(json.dumps(jsonfast._finite(value), ensure_ascii=False, default=str))
    text = jsonfast.dumps(value)
    assert isinstance(text, bytes) and b"\n" not in text
    assert json.loads(text) == want


def test_dumps_writes_null_for_non_finite_numbers() -> None:
    assert json.loads(jsonfast.dumps({"a": math.nan, "b": [math.inf]})) == {"a": None, "b": [None]}
    assert jsonfast.dumps({"a": math.nan, "big": 2**70}) == b'{"a":null,"big":1180591620717411303424}'


def test_lone_surrogate_is_written_as_its_escape() -> None:
    text = jsonfast.dumps({"v": "a\ud800b", "ok": "é"})
    assert text.decode("utf-8")  # valid UTF-8: a results file stays readable
    assert json.loads(text) == {"v": "a\ud800b", "ok": "é"}


class _Float(float):
    pass


def test_float_subclass_is_a_number() -> None:  # numpy.float64 is one
    assert json.loads(jsonfast.dumps({"s": _Float(0.5), "n": _Float("nan")})) == {"s": 0.5, "n": None}
