"""Validate a parsed config (or a test file) against the schema, errors at FILE:LINE key.path. A small compiled
check (`_Compiler`, ~3-4 µs a test) accepts valid documents; jsonschema (~250 µs a test) words the violations."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache
from typing import Any

from evalrun.config.schema_errors import explain_all, key_path, locate, nan_path_of
from evalrun.config.schema_source import OPTION_KEYS, runtime_schema
from evalrun.errors import ConfigError, ConfigErrors, Location, did_you_mean, lenient_warn

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
    """True when `value` satisfies `schema` (the subset of JSON Schema 2020-12 that schema_source uses)."""
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
    kept: list[tuple[dict[str, Any], str, Any]] = []
    try:
        _validate(doc, file, definition, prefix, line, kept)
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


def _validate(doc: Any, file: str, definition: str | None, prefix: str, line: int,
              kept: list[tuple[dict[str, Any], str, Any]]) -> None:
    tests: set[int] | None = None
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
            if id(mapping) in tests and key in mapping:  # a test's own data: set aside while checking
                kept.append((mapping, key, mapping.pop(key)))
                if key in OPTION_KEYS:  # meant for `options:`, where it would act; promptfoo ignores it here
                    lenient_warn(loc, e.key or key, f"{key!r} directly on a test is not applied (promptfoo "
                                 "ignores it there too)", "move it under the test's `options:`")
                continue
            lenient_warn(loc, e.key or key, f"unknown key {key!r}, ignored", "promptfoo ignores it too; remove it")
            mapping.pop(key, None)
    raise explained[0]


def check_keys(node: Any, allowed: Sequence[str], *, what: str, key: str, loc: Location | None) -> None:
    """Unknown keys of a mapping built outside the schema (CSV rows, generator output)."""
    if isinstance(node, dict):
        for k in node:
            if k not in allowed:
                raise ConfigError.at(loc, f"unknown {what} key {k!r}", key=f"{key}.{k}" if key else k,
                                     hint=did_you_mean(k, allowed) or f"allowed keys: {', '.join(allowed)}")
