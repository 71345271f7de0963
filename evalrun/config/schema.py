"""The config's JSON Schema: read from evalrun/schemas/evalrun.schema.json (its one source: scripts/gen_schema.py),
checked by a small compiled check (~3-4 µs a test) that accepts valid documents, its violations found by jsonschema
(~250 µs a test) and worded for people: FILE:LINE, key path, hint (`explain_all`)."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterable, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from evalrun.config.readers.located import loc_of_path
from evalrun.errors import ConfigError, ConfigErrors, Location, did_you_mean, lenient_warn

SCHEMA_FILE = Path(__file__).resolve().parent.parent / "schemas" / "evalrun.schema.json"
_FILE_SCHEMA = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
_DEFS = _FILE_SCHEMA["$defs"]
TEST_KEYS = tuple(_DEFS["test"]["properties"])
#: Keys of a test's `options` (those promptfoo hands on to providers included).
OPTION_KEYS = tuple(_DEFS["testOptions"]["properties"])
PROVIDER_KEYS = tuple(_DEFS["providerObject"]["properties"])


def build_schema(type_names: Sequence[str] | None = None) -> dict[str, Any]:
    """The config schema, its assertion `type` an enum of `type_names` (and their `not-` forms), or any string."""
    schema = copy.deepcopy(_FILE_SCHEMA)
    type_schema = schema["$defs"]["assertion"]["properties"]["type"]
    type_schema.pop("enum", None)
    if type_names is None:
        type_schema["type"] = "string"
    else:
        names = sorted(set(type_names))
        type_schema["enum"] = names + [f"not-{n}" for n in names]
    return schema


@cache
def runtime_schema(definition: str | None = None) -> dict[str, Any]:
    """The run-time schema (any assertion type), or one named definition of it with `$defs` kept resolvable."""
    schema = build_schema(None)
    if definition is not None:
        schema = {"$defs": schema["$defs"], **schema["$defs"][definition]}
    return schema


def key_path(parts: Iterable[Any], prefix: str = "") -> str:
    """('tests', 2, 'assert', 0) -> 'tests[2].assert[0]'."""
    out = prefix
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


def locate(doc: Any, path: Sequence[Any], file: str, line: int = 0) -> Location:
    """Line of the deepest node on `path` that knows its location (`line` for untracked documents)."""
    return loc_of_path(doc, path) or Location(file, getattr(doc, "line", line))


_JSON_TYPES = {"object": "a mapping", "array": "a list", "string": "a string", "number": "a number",
               "integer": "an integer", "boolean": "true/false", "null": "null"}


def _kind(value: Any) -> str:
    for cls, name in ((bool, "true/false"), (dict, "a mapping"), (list, "a list"), (str, "a string"),
                      ((int, float), "a number"), (type(None), "null")):
        if isinstance(value, cls):
            return name
    return type(value).__name__


def _want(types: Any) -> str:
    names = [types] if isinstance(types, str) else list(types)
    return " or ".join(_JSON_TYPES.get(t, t) for t in names)


def _branch_fits(err: Any) -> bool:
    """An anyOf alternative whose error is deeper than a type mismatch of the value itself."""
    return not (err.validator == "type" and not err.relative_path)


def _overlap(alt: dict[str, Any], instance: dict[str, Any]) -> int:
    """How many of the instance's keys an anyOf alternative declares (after one $ref)."""
    if "$ref" in alt:
        alt = _DEFS.get(alt["$ref"].rsplit("/", 1)[1], {})
    return sum(1 for k in instance if k in alt.get("properties", {}))


def _best(err: Any) -> Any:
    """The error of an anyOf failure's alternative that fits the value best (for a mapping: the alternative that
    knows most of its keys), or None when no alternative fits its shape."""
    fitting = [e for e in err.context if _branch_fits(e)]
    if not fitting:
        return None
    if isinstance(err.instance, dict):
        scores = {i: _overlap(alt, err.instance) for i, alt in enumerate(err.validator_value)}
        return min(fitting, key=lambda e: (-scores.get(e.relative_schema_path[0], 0), -len(e.absolute_path)))
    return max(fitting, key=lambda e: len(e.absolute_path))


def explain_all(err: Any, doc: Any, file: str, prefix: str, line: int = 0) -> list[ConfigError]:
    """Every error one schema violation stands for: each error of the best-fitting anyOf alternative (every
    bad test of a list), one per unknown key of a mapping, else `_explain`'s one."""
    if err.validator in ("anyOf", "oneOf") and err.context:
        best = _best(err)
        if best is not None:  # every error of that alternative
            branch = [e for e in err.context if _branch_fits(e)
                      and e.relative_schema_path[0] == best.relative_schema_path[0]]
            return [x for e in branch for x in explain_all(e, doc, file, prefix, line)]
    path = list(err.absolute_path)
    if err.validator == "additionalProperties" and isinstance(err.instance, dict):
        allowed = list(err.schema.get("properties", {}))
        out = []
        for k in err.instance:
            if k in allowed:
                continue
            loc = locate(doc, [*path, k], file, line)
            near = did_you_mean(str(k), allowed)
            e = ConfigError.at(loc, f"unknown key {k!r}", key=key_path([*path, k], prefix),
                               hint=near or f"allowed keys: {', '.join(allowed)}")
            if near is None:  # not a misspelling of a valid key: promptfoo drops it (lenient_warn)
                e.droppable = (err.instance, k, loc)  # type: ignore[attr-defined]
            out.append(e)
        if out:
            return out
    return [_explain(err, doc, file, prefix, line)]


def _explain(err: Any, doc: Any, file: str, prefix: str, line: int = 0) -> ConfigError:
    path = list(err.absolute_path)
    where = key_path(path, prefix) or None
    if err.validator in ("anyOf", "oneOf") and err.context:  # no alternative fits the value's shape
        wanted: list[str] = []
        for e in err.context:
            t = e.validator_value
            wanted.extend([t] if isinstance(t, str) else t)
        return ConfigError.at(locate(doc, path, file, line), f"expected {_want(dict.fromkeys(wanted))}, got "
                              f"{_kind(err.instance)}", key=where, hint=err.schema.get("description"))
    loc = locate(doc, path, file, line)
    v = err.validator
    if v == "type":
        msg = f"expected {_want(err.validator_value)}, got {_kind(err.instance)}"
        return ConfigError.at(loc, msg, key=where, hint=err.schema.get("description"))
    if v == "required":
        missing = [k for k in err.validator_value if k not in err.instance]
        return ConfigError.at(loc, f"missing required key {missing[0]!r}", key=where,
                              hint=err.schema.get("description"))
    if v in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        lo, hi = err.schema.get("minimum"), err.schema.get("maximum")
        rng = f"between {lo} and {hi}" if lo is not None and hi is not None else (
            f"at least {lo}" if lo is not None else f"at most {hi}")
        return ConfigError.at(loc, f"{err.instance!r} is out of range: must be {rng}", key=where)
    if v == "enum":
        close = did_you_mean(str(err.instance), [str(x) for x in err.validator_value])
        return ConfigError.at(loc, f"{err.instance!r} is not one of the allowed values", key=where,
                              hint=close or err.schema.get("description"))
    if v in ("minProperties", "maxProperties"):
        return ConfigError.at(loc, "expected a mapping with exactly one key", key=where,
                              hint=err.schema.get("description"))
    return ConfigError.at(loc, err.message, key=where)


_FREE_FORM = frozenset({"vars", "metadata", "config", "value", "env", "derivedMetrics"})


def nan_path_of(doc: Any) -> list[Any] | None:
    """Path of the first NaN in `doc` outside free-form data (vars, config, ...), walked without recursion."""
    stack: list[tuple[Any, list[Any]]] = [(doc, [])]
    while stack:
        node, path = stack.pop()
        if isinstance(node, float) and node != node:
            return path
        if isinstance(node, dict):
            stack.extend((v, [*path, k]) for k, v in reversed(list(node.items())) if k not in _FREE_FORM)
        elif isinstance(node, list):
            stack.extend((v, [*path, i]) for i, v in reversed(list(enumerate(node))))
    return None


_PY_TYPES: dict[str, Any] = {"object": dict, "array": list, "string": str, "boolean": bool,
                             "number": (int, float), "integer": int, "null": type(None)}


def _is_type(value: Any, name: str) -> bool:
    if name in ("number", "integer") and isinstance(value, bool):
        return False
    if name == "integer" and isinstance(value, float):
        return value.is_integer()
    return isinstance(value, _PY_TYPES[name])


Check = Callable[[Any], bool]
_MISSING = object()


def _type_check(t: str | list[str]) -> Check:
    if t in ("object", "array", "string"):
        cls = _PY_TYPES[t]
        return lambda v: isinstance(v, cls)
    names = [t] if isinstance(t, str) else list(t)
    return lambda v: any(_is_type(v, n) for n in names)


class _Compiler:
    """Turns a schema into nested closures once, so checking a document is a few dict lookups per node."""

    def __init__(self, defs: dict[str, Any]) -> None:
        self.defs = defs
        self.done: dict[str, Check | None] = {}

    def ref(self, name: str) -> Check:
        if name not in self.done:
            self.done[name] = None  # placeholder while compiling
            self.done[name] = self.compile(self.defs[name]) or (lambda v: True)
        found = self.done[name]
        if found is None:  # a recursive reference: look it up when called
            return lambda v: self.done[name](v)  # type: ignore[misc]
        return found

    def compile(self, schema: Any) -> Check | None:
        """A check function, or None when the schema accepts everything."""
        if schema is True or schema == {}:
            return None
        if schema is False:
            return lambda v: False
        checks: list[Check] = []
        if "$ref" in schema:
            checks.append(self.ref(schema["$ref"].rsplit("/", 1)[1]))
        if "type" in schema:
            checks.append(_type_check(schema["type"]))
        if "enum" in schema:
            enum = list(schema["enum"])
            checks.append(lambda v: v in enum)
        if "anyOf" in schema:
            alts = [self.compile(a) for a in schema["anyOf"]]

            def any_of(v: Any, alts: list[Check | None] = alts) -> bool:
                for a in alts:  # noqa: SIM110 - any(generator) costs a generator per value
                    if a is None or a(v):
                        return True
                return False

            checks.append(any_of)
        if any(k in schema for k in ("properties", "additionalProperties", "required", "minProperties",
                                     "maxProperties")):
            checks.append(self._object(schema))
        if "items" in schema:
            item = self.compile(schema["items"])
            if item is not None:
                def items(v: Any, item: Check = item) -> bool:
                    if isinstance(v, list):
                        for x in v:
                            if not item(x):
                                return False
                    return True

                checks.append(items)
        if "minimum" in schema or "maximum" in schema:
            lo, hi = schema.get("minimum"), schema.get("maximum")
            checks.append(lambda v: isinstance(v, bool) or not isinstance(v, (int, float))
                          or ((lo is None or v >= lo) and (hi is None or v <= hi)))
        if not checks:
            return None
        if len(checks) == 1:
            return checks[0]
        if len(checks) == 2:
            first, second = checks
            return lambda v: first(v) and second(v)
        return lambda v: all(c(v) for c in checks)

    def _object(self, schema: dict[str, Any]) -> Check:
        props = {k: self.compile(v) for k, v in schema.get("properties", {}).items()}
        extra_schema = schema.get("additionalProperties", True)
        closed = extra_schema is False
        extra = None if closed else self.compile(extra_schema)
        required = tuple(schema.get("required", ()))
        lo, hi = schema.get("minProperties", 0), schema.get("maxProperties")

        def obj(v: Any) -> bool:
            if not isinstance(v, dict):
                return True
            for k, x in v.items():
                c = props.get(k, _MISSING)
                if c is _MISSING:
                    if closed:
                        return False
                    c = extra
                if c is not None and not c(x):  # type: ignore[operator]
                    return False
            for r in required:
                if r not in v:
                    return False
            return lo <= len(v) and (hi is None or len(v) <= hi)

        return obj


def conforms(value: Any, schema: dict[str, Any] | bool, defs: dict[str, Any]) -> bool:
    """True when `value` satisfies `schema` (the subset of JSON Schema 2020-12 the schema uses)."""
    check = _Compiler(defs).compile(schema)
    return check is None or check(value)


@cache
def _runtime_check(definition: str | None) -> Check:
    schema = runtime_schema(definition)
    return _Compiler(schema["$defs"]).compile(schema) or (lambda v: True)


@cache
def _validator(definition: str | None) -> Any:
    from jsonschema import Draft202012Validator

    return Draft202012Validator(runtime_schema(definition))


def validate(doc: Any, *, file: str, definition: str | None = None, prefix: str = "", line: int = 0) -> None:
    """Raise the schema violations of `doc` (in file order) as a ConfigError; `line` locates documents built
    outside a tracked file (CSV rows, generator output). An unknown key that is no near-miss of a valid one is
    dropped with a warning (lenient_warn), as promptfoo drops it, except on a test: promptfoo keeps those
    (`expected` in a JSONL row) for `context.test`, so they stay on the mapping (TestPart.extra)."""
    kept: list[tuple[dict[str, Any], str, Any]] = []  # a test's own keys, set aside while checking
    tests: set[int] | None = None
    try:
        for _ in range(200):  # each round drops the unknown keys promptfoo ignores, then checks again
            if _runtime_check(definition)(doc):
                return
            errors = list(_validator(definition).iter_errors(doc))
            if not errors:
                nan_path = nan_path_of(doc)  # jsonschema accepts NaN where a range is required (NaN < 0 is False)
                if nan_path is not None:
                    raise ConfigError.at(locate(doc, nan_path, file, line), "NaN is not a valid number here",
                                         key=key_path(nan_path, prefix) or None, hint="give a finite number")
                return
            explained = sorted((x for e in errors for x in explain_all(e, doc, file, prefix, line)),
                               key=lambda e: e.line or 10**9)
            droppable = [e for e in explained if getattr(e, "droppable", None)]
            if len(droppable) < len(explained):  # real errors: report them all (a dropped key only warns)
                raise ConfigErrors.of([e for e in explained if not getattr(e, "droppable", None)])
            for e in droppable:
                mapping, key, loc = e.droppable  # type: ignore[attr-defined]
                if tests is None:
                    tests = _test_nodes(doc, definition)
                if id(mapping) in tests and key in mapping:  # a test's own data (TestPart.extra)
                    kept.append((mapping, key, mapping.pop(key)))
                    if key in OPTION_KEYS:  # meant for `options:`, where it would act; promptfoo ignores it here
                        lenient_warn(loc, e.key or key, f"{key!r} directly on a test is not applied (promptfoo "
                                     "ignores it there too)", "move it under the test's `options:`")
                    continue
                lenient_warn(loc, e.key or key, f"unknown key {key!r}, ignored", "promptfoo ignores it too; remove it")
                mapping.pop(key, None)
        raise explained[0]
    finally:
        for mapping, key, value in kept:
            mapping[key] = value


def _test_nodes(doc: Any, definition: str | None) -> set[int]:
    """ids of the test mappings in `doc` (a test, or a config's `tests` and scenarios' `tests`)."""
    if definition == "test":
        return {id(doc)}
    if definition is not None or not isinstance(doc, dict):
        return set()
    lists = [doc.get("tests")] + [sc.get("tests") for sc in doc.get("scenarios") or () if isinstance(sc, dict)]
    return {id(t) for tests in lists if isinstance(tests, list) for t in tests if isinstance(t, dict)}


def check_keys(node: Any, allowed: Sequence[str], *, what: str, key: str, loc: Location | None) -> None:
    """Unknown keys of a mapping built outside the schema (CSV rows, generator output)."""
    if isinstance(node, dict):
        for k in node:
            if k not in allowed:
                raise ConfigError.at(loc, f"unknown {what} key {k!r}", key=f"{key}.{k}" if key else k,
                                     hint=did_you_mean(k, allowed) or f"allowed keys: {', '.join(allowed)}")
