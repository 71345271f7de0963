"""is-json, contains-json, is-valid-openai-tools-call, XML and HTML assertions (SQL: test_assertions_sql.py)."""

from __future__ import annotations

import json

import pytest

from evalrun.assertions.structured import extract_json_objects
from evalrun.types import Output, ProviderSpec
from tests.test_assertions_helpers import bad, run

SCHEMA = {"type": "object", "required": ["name"], "properties": {"age": {"type": "integer", "minimum": 0}}}


@pytest.mark.parametrize(("type_", "output", "value", "expected"), [
    ("is-json", '{"a": 1}', None, True),
    ("is-json", "  [1, 2]\n", None, True),
    ("is-json", "42", None, True),
    ("is-json", "{a: 1}", None, False),
    ("is-json", "NaN", None, False),                  # JSON.parse rejects it
    ("is-json", '{"name": "x", "age": 3}', SCHEMA, True),
    ("is-json", '{"name": "x", "age": -3}', SCHEMA, False),
    ("is-json", '{"age": 3}', "type: object\nrequired: [name]", False),   # schema as YAML text
    ("contains-json", 'Sure! {"a": 1} done', None, True),
    ("contains-json", "no braces", None, False),
    ("contains-json", "{ not json at all }", None, True),     # a YAML flow mapping, as in promptfoo
    ("contains-json", "lax {'a': 1} yaml-ish", None, True),
    ("contains-json", "unclosed { key: 1", None, True),
    ("contains-json", "ends with {", None, False),            # closed and read as YAML, as promptfoo does
    ("contains-json", 'one {"age": 1} two {"name": "n"}', SCHEMA, True),
    ("contains-json", 'one {"age": 1}', SCHEMA, False),
    ("is-xml", "<a><b>1</b></a>", None, True),
    ("is-xml", "<a><b></a>", None, False),
    ("is-xml", "plain", None, False),
    ("is-xml", "", None, False),
    ("is-xml", '<a x="1"><b/></a>', "a.b, a.@_x", True),
    ("is-xml", "<a><b/></a>", ["a.c"], False),
    ("is-xml", "<a><b/></a>", {"requiredElements": ["a.b"]}, True),
    ("contains-xml", "Here: <note><to>A</to></note> ok", None, True),
    ("contains-xml", "Here: <note><to>A</note> ok", None, False),
    ("contains-xml", "no xml", None, False),
    ("contains-xml", "x <r><item/></r> y", "r.item", True),
    ("is-html", "<div><p>Hi</p></div>", None, True),
    ("is-html", "<!DOCTYPE html><html><body>text<p>x</p></body></html>", None, True),
    ("is-html", "Hello <b>world</b>", None, False),
    ("is-html", "<foo>bar</foo>", None, False),
    ("is-html", "<my-widget>x</my-widget>", None, True),
    ("is-html", '<?xml version="1.0"?><a/>', None, False),
    ("is-html", "   ", None, False),
    ("is-html", "<p>x</p><body>y</body>", None, False),          # body already implied: y is top-level text
    ("is-html", "<body>a</body>tail", None, True),
    ("is-html", "</html><html>", None, False),                   # the literal <html> came too late to count
    ("is-html", "<svg></svg>", None, False),
    ("is-html", "<title>x</title>", None, True),
    ("is-html", "</body><head>", None, False),                   # </body> first creates head and body implicitly
    ("is-html", "<item id='1'/></html>}<b>b</b>", None, True),   # `/>` is ignored: } lands inside <item>
    ("contains-html", "see <b>bold</b>", None, True),
    ("contains-html", "a &amp; b &lt; c", None, False),      # one signal only
    ("contains-html", "1 < 2 and 3 > 2", None, False),
])
def test_pass_fail_and_not(type_: str, output: str, value: object, expected: bool) -> None:
    r = run(type_, output, value)
    assert r.error is None, r.error
    assert r.pass_ is expected, r.reason
    n = run("not-" + type_, output, value)
    assert n.pass_ is (not expected) and n.score == (0.0 if expected else 1.0)


def test_extract_json_objects_skips_nested_and_reads_in_order() -> None:
    assert extract_json_objects('x {"a": {"b": 1}} y {"c": 2}') == [{"a": {"b": 1}}, {"c": 2}]


def test_schema_failure_reason_names_the_path() -> None:
    r = run("is-json", '{"name": "x", "age": -3}', SCHEMA)
    assert "age" in r.reason and "minimum" in r.reason


TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "parameters": {"type": "object", "required": ["city"],
                                          "properties": {"city": {"type": "string"}}}}}]


def _call(name: str, args: object) -> str:
    return json.dumps([{"id": "1", "type": "function",
                        "function": {"name": name, "arguments": json.dumps(args)}}])


@pytest.mark.parametrize(("output", "expected", "needle"), [
    (_call("get_weather", {"city": "Oslo"}), True, "valid tool call"),
    (json.dumps({"tool_calls": json.loads(_call("get_weather", {"city": "Oslo"}))}), True, "valid"),
    (_call("get_weather", {}), False, "does not match its schema"),
    (_call("get_time", {}), False, "not among the tools"),
    ("just text", False, "not a valid-looking tools response"),
])
def test_openai_tools_call(output: str, expected: bool, needle: str) -> None:
    prov = ProviderSpec(id="openai:gpt-4o-mini", config={"tools": TOOLS})
    r = run("is-valid-openai-tools-call", output, ctx_kw={"provider": prov})
    assert r.pass_ is expected and needle in r.reason
    n = run("not-is-valid-openai-tools-call", output, ctx_kw={"provider": prov})
    assert n.pass_ is (not expected)


def test_openai_tools_call_without_tools_configured() -> None:
    r = run("is-valid-openai-tools-call", _call("get_weather", {"city": "x"}),
            ctx_kw={"response": Output(text="")})
    assert not r.pass_ and "No tools configured" in r.reason


@pytest.mark.parametrize(("type_", "value", "needle"), [
    ("is-json", {"type": "objekt"}, "not a valid JSON Schema"),
    ("is-json", "[unclosed", "neither JSON nor YAML"),
    ("contains-json", [1, 2], "must be a mapping"),
    ("is-xml", 5, "must be a string, a list"),
    ("contains-xml", {"other": 1}, "must be a string, a list"),
    ("is-html", "<p>", "takes no value"),
    ("contains-html", True, "takes no value"),
    ("is-valid-openai-tools-call", "x", "takes no value"),
])
def test_bad_arguments(type_: str, value: object, needle: str) -> None:
    e = bad(type_, value)
    assert needle in str(e) and e.key == "tests[0].assert[0].value"
