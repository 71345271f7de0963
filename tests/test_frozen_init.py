"""fast_init: the replacement __init__ makes the same objects as the dataclass's own."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import pytest

from evalrun.types import AssertionResult, Case, CaseResult, TokenUsage, fast_init


@dataclass(frozen=True)
class _Plain:
    a: int
    b: str = "x"
    c: list[int] = field(default_factory=list)


@fast_init
@dataclass(frozen=True)
class _Fast:
    a: int
    b: str = "x"
    c: list[int] = field(default_factory=list)


def test_same_fields_defaults_and_factories() -> None:
    for args, kw in [((1,), {}), ((1, "y"), {}), ((), {"a": 2, "c": [3]}), ((1,), {"b": "z"})]:
        assert dataclasses.asdict(_Fast(*args, **kw)) == dataclasses.asdict(_Plain(*args, **kw))
    one, two = _Fast(1), _Fast(1)
    assert one == two and one.c is not two.c  # a factory runs per instance
    assert hash(TokenUsage(1, 2, 3)) == hash(TokenUsage(1, 2, 3)) and TokenUsage(1) != TokenUsage(2)
    assert repr(one) == "_Fast(a=1, b='x', c=[])"


def test_still_frozen_and_replaceable() -> None:
    obj = _Fast(1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        obj.a = 2  # type: ignore[misc]
    assert dataclasses.replace(obj, b="q") == _Fast(1, "q")


def test_wrong_arguments_fail_as_before() -> None:
    with pytest.raises(TypeError):
        _Fast()  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        _Fast(1, nope=2)  # type: ignore[call-arg]


def test_classes_it_cannot_treat_are_left_alone() -> None:
    @dataclass(frozen=True)
    class WithPost:
        a: int

        def __post_init__(self) -> None:
            pass

    @dataclass
    class NotFrozen:
        a: int

    assert fast_init(WithPost).__init__ is WithPost.__init__
    assert fast_init(NotFrozen).__init__ is NotFrozen.__init__


def test_hot_result_types_use_it() -> None:
    for cls in (AssertionResult, CaseResult, Case, TokenUsage):
        assert cls.__init__.__globals__.get("_MISSING") is not None  # the generated __init__, not dataclass's
    result = AssertionResult("contains", True, 1.0, None, 1.0, "ok")
    assert result.details == {} and result.tokens == TokenUsage() and result.children == ()
