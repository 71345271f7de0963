"""JSON assertions: is-json and contains-json (optionally against a JSON Schema), is-valid-openai-tools-call and
is-valid-openai-function-call."""

from __future__ import annotations

import json
import os
import re
from typing import Any

from evalrun.assertions.base import Assertion, AssertionContext, Score, binary
from evalrun.assertions.registry import register


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def loads_strict(text: str) -> Any:
    """JSON.parse semantics: NaN/Infinity are errors."""
    return json.loads(text, parse_constant=_reject_constant)


def extract_json_objects(text: str) -> list[Any]:
    """Every top-level `{...}` object in the text, left to right (promptfoo's extractJsonObjects): strict JSON,
    else the brace-balanced span as YAML flow (single quotes, unquoted keys)."""
    dec = json.JSONDecoder(parse_constant=_reject_constant)
    found: list[Any] = []
    i = 0
    while (start := text.find("{", i)) >= 0:
        try:
            obj, end = dec.raw_decode(text, start)
        except ValueError:
            obj, end = _lax_object(text, start)
        if isinstance(obj, dict):
            found.append(obj)
            i = end
        else:
            i = start + 1
    return found


def _lax_object(text: str, start: int) -> tuple[Any, int]:
    """promptfoo's fallback: the span up to where the braces balance (or, when the text ends first, all of it with
    what is open closed) read as YAML, once; nothing when that is no mapping or list."""
    import yaml
    end, depth = min(len(text), start + 100_000), 1
    for m in _BRACES.finditer(text, start + 1, end):
        depth += 1 if m.group() == "{" else -1
        if depth == 0:
            end = m.end()
            break
    try:
        obj = yaml.safe_load(text[start:end] + "}" * depth) if end > start + 1 else None
    except yaml.YAMLError:
        obj = None
    return (obj, end) if isinstance(obj, (dict, list)) else (None, start + 1)


_BRACES = re.compile(r"[{}]")


class _SchemaBase(Assertion):
    value_hint = "give a JSON Schema as a mapping (or as YAML/JSON text)"

    def parse(self, value: Any) -> Any:
        """The JSON Schema validator for `value`, or None when no schema was given."""
        if value is None or value == "":
            return None
        schema = value
        if isinstance(value, str):
            import yaml
            try:
                schema = yaml.safe_load(value)
            except yaml.YAMLError as e:
                raise ValueError(f"schema text is neither JSON nor YAML: {e}") from None
        if not isinstance(schema, (dict, bool)):
            raise ValueError(f"a JSON Schema must be a mapping, got {type(schema).__name__}")
        return compile_schema(schema)

    def check_against(self, validator: Any, obj: Any) -> str | None:
        e = min(validator.iter_errors(obj), key=lambda e: list(e.absolute_path), default=None)
        if e is None:
            return None
        where = "/".join(str(p) for p in e.absolute_path)
        return f"{'at /' + where + ': ' if where else ''}{e.message}"


_SCHEMAS: dict[str, Any] = {}


def compile_schema(schema: dict[str, Any] | bool) -> Any:
    """A cached jsonschema validator (draft 7 unless `$schema` says otherwise); ValueError if not a schema."""
    key = json.dumps(schema, sort_keys=True, default=str)
    if key not in _SCHEMAS:
        import jsonschema
        from jsonschema.validators import validator_for
        cls = validator_for(schema, default=jsonschema.Draft7Validator)
        try:
            cls.check_schema(schema)  # type: ignore[arg-type]
        except jsonschema.SchemaError as e:
            raise ValueError(f"not a valid JSON Schema: {e.message}") from None
        _SCHEMAS[key] = cls(schema, format_checker=cls.FORMAT_CHECKER)
    return _SCHEMAS[key]


@register("is-json")
class IsJson(_SchemaBase):
    """The whole output parses as JSON (and, with `value`, validates against that JSON Schema).

    YAML keys: `value` (optional): a JSON Schema (mapping, YAML/JSON text, or file://schema.json).
    """

    async def evaluate(self, ctx: AssertionContext) -> Score:
        validator = self.value_of(ctx)
        try:
            obj = loads_strict(ctx.output)
        except ValueError as e:
            return binary(False, f"Output is not valid JSON: {e}")
        if validator is not None and (err := self.check_against(validator, obj)):
            return binary(False, f"JSON does not conform to the schema: {err}")
        return binary(True, "Output is valid JSON" if validator is None else "Output is JSON conforming to the schema")


@register("contains-json")
class ContainsJson(_SchemaBase):
    """The output contains a JSON object (and, with `value`, one that validates against that JSON Schema).

    YAML keys: `value` (optional): a JSON Schema (mapping, YAML/JSON text, or file://schema.json).
    Objects are found at every `{`; prose around them is ignored.
    """

    async def evaluate(self, ctx: AssertionContext) -> Score:
        validator = self.value_of(ctx)
        objs = extract_json_objects(ctx.output)
        if not objs:
            return binary(False, "Output contains no JSON object")
        if validator is None:
            return binary(True, f"Output contains {len(objs)} JSON object(s)")
        last = ""
        for obj in objs:
            err = self.check_against(validator, obj)
            if err is None:
                return binary(True, "Output contains JSON conforming to the schema")
            last = err
        return binary(False, f"No JSON object in the output conforms to the schema: {last}")


@register("is-valid-openai-tools-call")
class IsValidOpenAiToolsCall(Assertion):
    """The output is an OpenAI `tool_calls` list whose calls name configured tools with valid arguments.

    YAML keys: none. The tools come from the provider's `config.tools` (OpenAI format); each call's
    `function.arguments` must be a JSON string validating against that tool's `parameters` schema.
    """

    takes_value = False

    async def evaluate(self, ctx: AssertionContext) -> Score:
        try:  # the output text as JSON, else the provider's raw response
            calls: Any = json.loads(ctx.output)
        except ValueError:
            calls = ctx.response.raw
        if isinstance(calls, dict) and "tool_calls" in calls:
            calls = calls["tool_calls"]
        if not isinstance(calls, list) or not calls or any(
                not isinstance(c, dict) or not isinstance(c.get("function"), dict)
                or not isinstance(c["function"].get("name"), str)
                or not isinstance(c["function"].get("arguments"), str) for c in calls):
            return binary(False, f"Output is not a valid-looking tools response: {ctx.output[:200]}")
        tools = ctx.case.provider.config.get("tools")
        if not tools:
            return binary(False, "No tools configured in provider, but output contains tool calls")
        funcs = {t["function"]["name"]: t["function"] for t in tools
                 if isinstance(t, dict) and t.get("type") == "function" and isinstance(t.get("function"), dict)}
        for c in calls:
            fn = c["function"]
            spec = funcs.get(fn["name"])
            if spec is None:
                return binary(False, f"Called {fn['name']!r}, which is not among the tools: {sorted(funcs)}")
            problem = call_problem(fn["name"], fn["arguments"], spec)
            if problem:
                return binary(False, problem)
        return binary(True, f"{len(calls)} valid tool call(s)")


def call_problem(name: str, arguments: str, spec: dict[str, Any]) -> str | None:
    """Why a function/tool call's JSON `arguments` do not fit the function's `parameters` schema, or None."""
    try:
        args = loads_strict(arguments)
    except ValueError as e:
        return f"Arguments of {name!r} are not JSON: {e}"
    params = spec.get("parameters")
    if not params:
        return None
    try:
        validator = compile_schema(params)
    except ValueError as e:
        return f"Tool {name!r} has an invalid parameters schema: {e}"
    error = next(validator.iter_errors(args), None)
    return None if error is None else f"Call to {name!r} does not match its schema: {error.message}"


@register("is-valid-openai-function-call")
class IsValidOpenAiFunctionCall(Assertion):
    """The output is an OpenAI function call (`{name, arguments}`) matching the provider's `config.functions`.

    YAML keys: none. The output is JSON text or the object a transform returned; `config.functions` is a list,
    or a `file://` YAML/JSON file of them (relative to the config); `arguments` must be a JSON string that
    validates against the function's `parameters` schema.
    """

    takes_value = False

    async def evaluate(self, ctx: AssertionContext) -> Score:
        call = ctx.output_value
        if call is None:
            try:
                call = json.loads(ctx.output)
            except ValueError:
                call = None
        if isinstance(call, dict) and isinstance(call.get("function_call"), dict):
            call = call["function_call"]
        if not (isinstance(call, dict) and isinstance(call.get("name"), str)
                and isinstance(call.get("arguments"), str)):
            return binary(False, f"OpenAI did not return a valid-looking function call: {ctx.output[:200]}")
        funcs = ctx.case.provider.config.get("functions")
        if isinstance(funcs, str) and funcs.startswith("file://"):
            from evalrun.config.readers import parse_data
            path = os.path.join(self.base_dir, funcs[len("file://"):])  # an absolute path stays absolute
            try:
                with open(path, encoding="utf-8") as f:
                    funcs = parse_data(f.read(), path)
            except (OSError, ValueError) as e:
                return binary(False, f"cannot read the provider's config.functions: {e}")
        spec = next((f for f in funcs or () if isinstance(f, dict) and f.get("name") == call["name"]), None)
        if spec is None:
            return binary(False, f"Called {call['name']!r}, which is not among the provider's functions")
        problem = call_problem(call["name"], call["arguments"], spec)
        return binary(problem is None, problem or f"valid call to {call['name']!r}")
