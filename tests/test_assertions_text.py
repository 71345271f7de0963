"""String assertions: pass, fail, not- and bad arguments for each type."""

from __future__ import annotations

import pytest

from tests.test_assertions_helpers import bad, run


@pytest.mark.parametrize(("type_", "output", "value", "expected"), [
    ("equals", "Hello", "Hello", True),
    ("equals", "Hello ", "Hello", False),          # no trimming
    ("equals", "hello", "Hello", False),           # case-sensitive
    ("equals", "5", 5, True),                      # numbers compare as JavaScript prints them
    ("equals", "true", True, True),
    ("equals", "1.5", 1.5, True),
    ("equals", '{"a": 1, "b": [1, 2]}', {"b": [1, 2], "a": 1}, True),   # objects compare as JSON
    ("equals", '{"a": true}', {"a": 1}, False),    # strict: true is not 1
    ("equals", "not json", {"a": 1}, False),
    ("contains", "The answer is 42.", "42", True),
    ("contains", "The answer is 42.", 42, True),
    ("contains", "The answer is 42.", "answer is 43", False),
    ("contains", "ABC", "abc", False),
    ("icontains", "ABC", "abc", True),
    ("icontains", "ABC", "abd", False),
    ("contains-any", "red car", ["blue", "red"], True),
    ("contains-any", "red car", "blue, green", False),
    ("contains-any", "a, b here", '"a, b", zzz', True),   # quoted field keeps its comma
    ("icontains-any", "RED car", ["blue", "red"], True),
    ("icontains-any", "RED car", ["blue"], False),
    ("contains-all", "red and blue", "red, blue", True),
    ("contains-all", "red and blue", ["red", "green"], False),
    ("icontains-all", "RED and BLUE", ["red", "blue"], True),
    ("icontains-all", "RED and BLUE", ["red", "pink"], False),
    ("starts-with", "Yes, indeed", "Yes", True),
    ("starts-with", " Yes", "Yes", False),
    ("regex", "order #12345 shipped", r"#\d{5}\b", True),
    ("regex", "order #123 shipped", r"#\d{5}\b", False),
    ("regex", "Date: 2024-01-02", r"(?<year>\d{4})-\d\d", True),   # JS named group syntax
    ("regex", "ABC", "(?i)abc", True),
    ("regex", "Paris\n", "Paris$", False),           # JavaScript `$`: end of the output only
    ("word-count", "one two  three\nfour", 4, True),
    ("word-count", "one two", 3, False),
    ("word-count", "one two three", {"min": 2, "max": 3}, True),
    ("word-count", "one two three four", {"max": 3}, False),
    ("word-count", "one", {"min": 2}, False),
    ("is-refusal", "I'm sorry, but I can't help with that.", None, True),
    ("is-refusal", "As an AI language model, I won't.", None, True),
    ("is-refusal", "Paris is the capital of France.", None, False),
    ("is-refusal", "I\u2019m sorry", None, True),          # curly apostrophe normalised
])
def test_pass_fail_and_not(type_: str, output: str, value: object, expected: bool) -> None:
    r = run(type_, output, value)
    assert r.pass_ is expected, r.reason
    assert r.score == (1.0 if expected else 0.0)
    assert r.error is None
    n = run("not-" + type_, output, value)
    assert n.pass_ is (not expected)
    assert n.score == (0.0 if expected else 1.0)
    assert n.type == "not-" + type_


def test_reasons_are_specific() -> None:
    assert "missing" in run("contains-all", "a", ["a", "b"]).reason
    assert '"b"' in run("contains-all", "a", ["a", "b"]).reason
    assert "Word count 2" in run("word-count", "a b", 3).reason


def test_empty_output_is_a_refusal_with_score_zero() -> None:
    r = run("is-refusal", "   ")
    assert r.pass_ and r.score == 0.0
    n = run("not-is-refusal", "")
    assert not n.pass_ and n.score == 0.0


@pytest.mark.parametrize(("type_", "value", "needle"), [
    ("equals", None, "value is required"),
    ("contains", None, "value is required"),
    ("contains", "", "non-empty"),
    ("contains", ["a"], "string or number"),
    ("icontains", True, "string or number"),
    ("contains-any", 5, "list or a comma-separated"),
    ("contains-all", '"unterminated, b', "unterminated"),
    ("contains-all", [], "at least one"),
    ("starts-with", "", "non-empty"),
    ("regex", "(unclosed", "invalid regular expression"),
    ("regex", 5, "non-empty string"),
    ("word-count", "many", "number"),
    ("word-count", {"min": 5, "max": 2}, "min (5) must be <= max (2)"),
    ("word-count", {"least": 2}, "only min and max"),
    ("is-refusal", "sorry", "takes no value"),
])
def test_bad_arguments_are_config_errors(type_: str, value: object, needle: str) -> None:
    e = bad(type_, value)
    assert needle in str(e)
    assert e.file == "suite.yaml" and e.line == 7
    assert e.key is not None and e.key.startswith("tests[0].assert[0]")


def test_templated_value_is_checked_per_case() -> None:
    import asyncio

    from evalrun.assertions import engine
    from tests.test_assertions_helpers import context, spec

    s = spec("regex", "{{ pattern }}")          # not checked at load time: rendered per case
    r = asyncio.run(engine.evaluate(s, context("abc", "(")))
    assert r.error and "invalid regular expression" in r.error
    assert not r.pass_ and r.score is None
    n = spec("not-regex", "{{ pattern }}")
    assert asyncio.run(engine.evaluate(n, context("abc", "("))).pass_ is False   # errors never invert


@pytest.mark.parametrize(("value", "expected"), [
    # expected values are what promptfoo 0.121.20's parseCommaSeparatedValues returns for the same string
    ('a, b ,c', ["a", "b", "c"]),
    (',,a,, b,', ["a", "b"]),                     # runs of commas and blanks between fields are skipped
    ('"a, b", c', ["a, b", "c"]),
    ('"say \\"hi\\"", x', ['say "hi"', "x"]),     # backslash-escaped quote
    ('"say ""hi""", x', ['say "hi"', "x"]),       # doubled quote
    ('"back\\\\slash"', ["back\\slash"]),
    ('" padded ",x', [" padded ", "x"]),          # a quoted field keeps its spaces
    ('"", x', ["", "x"]),                         # an empty quoted field is a field
    ('"a"  , b', ["a", "b"]),                     # blanks after a closing quote
    ('"a" b', None),                              # text after a closing quote: an error, as in promptfoo
    ('"a, b', None),                              # unterminated
    ('"a\\"', None),                              # the escaped quote does not close the field
])
def test_contains_any_strings_split_as_promptfoo_does(value, expected):
    from evalrun.assertions.text import parse_csv_values

    if expected is None:
        with pytest.raises(ValueError):
            parse_csv_values(value)
    else:
        assert parse_csv_values(value) == expected
