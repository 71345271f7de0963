"""Validate a parsed config (or a test file) against the schema; errors mapped back to FILE:LINE key.path.

Valid documents (the common case) are accepted by `conforms`, a small interpreter of the keywords the schema
uses, in a few milliseconds. Only when it finds a violation is jsonschema imported (lazily) to produce the
errors; the first one in file order is reported in plain words: unknown keys get a did-you-mean, `anyOf`
failures descend into the alternative that fits the value's shape. A test checks both agree.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from functools import cache
from typing import Any

from evalrun.config.schema_source import build_schema
from evalrun.config.yamlsrc import LDict, LList
from evalrun.errors import ConfigError, ConfigErrors, Location
from evalrun.suggest import did_you_mean


def key_path(parts: Iterable[Any], prefix: str = "") -> str:
    """('tests', 2, 'assert', 0) -> 'tests[2].assert[0]'."""
    out = prefix
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


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


def _plain_types(alternatives: list[Any]) -> tuple[type, ...] | None:
    """The classes of an anyOf whose alternatives are each only `{type: object|array|string}` (plus a description),
    else None."""
    out = []
    for alt in alternatives:
        if not isinstance(alt, dict) or set(alt) - {"type", "description"} or alt.get("type") not in (
                "object", "array", "string"):
            return None
        out.append(_PY_TYPES[alt["type"]])
    return tuple(out)


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
            classes = _plain_types(schema["anyOf"])
            if classes is not None:  # e.g. [{type: object}, {type: string}]: one isinstance
                checks.append(lambda v: isinstance(v, classes))
            else:
                alts = [self.compile(a) for a in schema["anyOf"]]

                def any_of(v: Any, alts: list[Check | None] = alts) -> bool:  # a loop: no generator per value
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
    schema = _runtime_schema(definition)
    return _Compiler(schema["$defs"]).compile(schema) or (lambda v: True)


@cache
def relaxed_check(definition: str, key: str) -> Check:
    """The check of `definition` (an object schema) with property `key` accepting anything: a document whose
    `key` value is known to pass (it equals one that passed) passes the full check exactly when it passes this."""
    schema = _runtime_schema(definition)
    relaxed = {**schema, "properties": {**schema["properties"], key: {}}}
    return _Compiler(schema["$defs"]).compile(relaxed) or (lambda v: True)


@cache
def _runtime_schema(definition: str | None) -> dict[str, Any]:
    schema = build_schema(None)
    if definition is not None:  # one named definition, keeping $defs resolvable
        schema = {"$defs": schema["$defs"], **schema["$defs"][definition]}
    return schema


@cache
def _validator(definition: str | None) -> Any:
    from jsonschema import Draft202012Validator

    return Draft202012Validator(_runtime_schema(definition))


def _locate(doc: Any, path: Sequence[Any], file: str, line: int = 0) -> Location:
    """Line of the deepest node on `path` that knows its location (`line` for untracked documents)."""
    node, loc = doc, Location(file, getattr(doc, "line", line))
    for part in path:
        in_dict = isinstance(node, LDict) and isinstance(part, str) and part in node
        in_list = isinstance(node, LList) and isinstance(part, int) and part < len(node)
        if not (in_dict or in_list):
            break
        loc = node.loc(part)
        node = node[part]
    return loc


_JSON_TYPES = {"object": "a mapping", "array": "a list", "string": "a string", "number": "a number",
               "integer": "an integer", "boolean": "true/false", "null": "null"}


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, (int, float)):
        return "a number"
    return "null" if value is None else type(value).__name__


def _want(types: Any) -> str:
    names = [types] if isinstance(types, str) else list(types)
    return " or ".join(_JSON_TYPES.get(t, t) for t in names)


def _branch_fits(err: Any) -> bool:
    """An anyOf alternative whose error is deeper than a type mismatch of the value itself."""
    return not (err.validator == "type" and not err.relative_path)


def _overlap(alt: dict[str, Any], instance: dict[str, Any], err: Any) -> int:
    """How many of the instance's keys an anyOf alternative declares (after one $ref)."""
    ref = alt.get("$ref")
    if ref is not None:
        root = _runtime_schema(None)
        alt = root["$defs"].get(ref.rsplit("/", 1)[1], {})
    return sum(1 for k in instance if k in alt.get("properties", {}))


def _chosen_branch(err: Any) -> list[Any] | None:
    """The errors of the anyOf alternative `_explain` would report (the one that fits the value best)."""
    fitting = [e for e in err.context if _branch_fits(e)]
    if not fitting:
        return None
    if isinstance(err.instance, dict):
        scores = {i: _overlap(alt, err.instance, err) for i, alt in enumerate(err.validator_value)}
        best = min(fitting, key=lambda e: (-scores.get(e.relative_schema_path[0], 0), -len(e.absolute_path)))
    else:
        best = max(fitting, key=lambda e: len(e.absolute_path))
    return [e for e in fitting if e.relative_schema_path[0] == best.relative_schema_path[0]]


def _explain_all(err: Any, doc: Any, file: str, prefix: str, line: int = 0) -> list[ConfigError]:
    """Every error one schema violation stands for: each error of the best-fitting anyOf alternative (every
    bad test of a list), one per unknown key of a mapping, else `_explain`'s one."""
    if err.validator in ("anyOf", "oneOf") and err.context:
        branch = _chosen_branch(err)
        if branch:
            return [x for e in branch for x in _explain_all(e, doc, file, prefix, line)]
    first = _explain(err, doc, file, prefix, line)
    dropped = getattr(first, "droppable", None)
    mapping = dropped[0] if dropped else None
    if not isinstance(mapping, dict) and first.message.startswith("unknown key "):
        mapping = _node_at(doc, first.key, prefix)
    if not isinstance(mapping, dict) or not first.message.startswith("unknown key "):
        return [first]
    path = _path_of(first.key or "", prefix)[:-1]
    allowed = list(_allowed_near(err, first))
    out = [first]
    for k in mapping:
        if k in allowed or f"unknown key {k!r}" == first.message:
            continue
        loc = _locate(doc, [*path, k], file, line)
        near = did_you_mean(str(k), allowed)
        e = ConfigError.at(loc, f"unknown key {k!r}", key=key_path([*path, k], prefix),
                           hint=near or f"allowed keys: {', '.join(allowed)}")
        if near is None:
            e.droppable = (mapping, k, loc)  # type: ignore[attr-defined]
        out.append(e)
    return out


def _allowed_near(err: Any, first: ConfigError) -> list[str]:
    """The keys allowed in the mapping `first` (an unknown-key error) is about."""
    allowed = getattr(first, "allowed", None)
    return list(allowed) if allowed is not None else list(err.schema.get("properties", {}))


def _path_of(dotted: str, prefix: str) -> list[Any]:
    """'tests[2].assert[0].x' -> ['tests', 2, 'assert', 0, 'x'] (the inverse of key_path)."""
    import re

    if prefix and dotted.startswith(prefix):
        dotted = dotted[len(prefix):].lstrip(".")
    return [int(m.group(1)) if m.group(1) is not None else m.group(2)
            for m in re.finditer(r"\[(\d+)\]|([^.\[\]]+)", dotted)]


def _node_at(doc: Any, dotted: str | None, prefix: str) -> Any:
    node = doc
    for part in _path_of(dotted or "", prefix)[:-1]:
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            return None
    return node


def _explain(err: Any, doc: Any, file: str, prefix: str, line: int = 0) -> ConfigError:
    if err.validator in ("anyOf", "oneOf") and err.context:
        fitting = [e for e in err.context if _branch_fits(e)]
        if fitting and isinstance(err.instance, dict):  # the alternative that knows most of the keys
            scores = {i: _overlap(alt, err.instance, err) for i, alt in enumerate(err.validator_value)}
            fitting.sort(key=lambda e: (-scores.get(e.relative_schema_path[0], 0), -len(e.absolute_path)))
            return _explain(fitting[0], doc, file, prefix, line)
        if fitting:
            best = max(fitting, key=lambda e: len(e.absolute_path))
            return _explain(best, doc, file, prefix, line)
        wanted: list[str] = []
        for e in err.context:
            t = e.validator_value
            wanted.extend([t] if isinstance(t, str) else t)
        loc = _locate(doc, err.absolute_path, file, line)
        return ConfigError.at(loc, f"expected {_want(dict.fromkeys(wanted))}, got {_kind(err.instance)}",
                              key=key_path(err.absolute_path, prefix) or None,
                              hint=err.schema.get("description"))
    path = list(err.absolute_path)
    where = key_path(path, prefix) or None
    if err.validator == "additionalProperties" and isinstance(err.instance, dict):
        allowed = list(err.schema.get("properties", {}))
        extra = [k for k in err.instance if k not in allowed]
        if extra:
            first = min(extra, key=lambda k: _locate(doc, [*path, k], file, line).line)
            loc = _locate(doc, [*path, first], file, line)
            near = did_you_mean(str(first), allowed)
            hint = near or f"allowed keys: {', '.join(allowed)}"
            error = ConfigError.at(loc, f"unknown key {first!r}", key=key_path([*path, first], prefix), hint=hint)
            error.allowed = allowed  # type: ignore[attr-defined]
            if near is None:  # not a misspelling of a valid key: promptfoo drops it (see lenient.py)
                error.droppable = (err.instance, first, loc)  # type: ignore[attr-defined]
            return error
    loc = _locate(doc, path, file, line)
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
        return ConfigError.at(loc, f"{err.instance!r} is not one of the allowed values", key=where, hint=close)
    if v in ("minProperties", "maxProperties"):
        return ConfigError.at(loc, "expected a mapping with exactly one key", key=where,
                              hint=err.schema.get("description"))
    return ConfigError.at(loc, err.message, key=where)


_FREE_FORM = frozenset({"vars", "metadata", "config", "value", "env", "derivedMetrics"})


def _nan_path(doc: Any) -> list[Any] | None:
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


def validate(doc: Any, *, file: str, definition: str | None = None, prefix: str = "", line: int = 0) -> None:
    """Raise the first (in file order) schema violation of `doc` as a ConfigError.

    `line` locates errors in documents built outside a tracked file (CSV rows, generator output).
    """
    from evalrun.config import lenient

    for _ in range(200):  # each round drops the unknown keys promptfoo ignores, then checks again
        if _runtime_check(definition)(doc):
            return
        errors = list(_validator(definition).iter_errors(doc))
        if not errors:
            nan_path = _nan_path(doc)  # jsonschema accepts NaN where a range is required (NaN < 0 is False)
            if nan_path is not None:
                raise ConfigError.at(_locate(doc, nan_path, file, line), "NaN is not a valid number here",
                                     key=key_path(nan_path, prefix) or None, hint="give a finite number")
            return
        explained = sorted((x for e in errors for x in _explain_all(e, doc, file, prefix, line)),
                           key=lambda e: e.line or 10**9)
        droppable = [e for e in explained if getattr(e, "droppable", None)]
        if len(droppable) < len(explained):  # real errors: report them all (a dropped key only warns)
            raise ConfigErrors.of([e for e in explained if not getattr(e, "droppable", None)])
        for e in droppable:
            mapping, key, loc = e.droppable  # type: ignore[attr-defined]
            lenient.note(loc, e.key or key, f"unknown key {key!r}")
            mapping.pop(key, None)
    raise explained[0]


def check_keys(node: Any, allowed: Sequence[str], *, what: str, key: str, loc: Location | None) -> None:
    """Unknown keys of a mapping built outside the schema (CSV rows, generator output)."""
    if isinstance(node, dict):
        for k in node:
            if k not in allowed:
                raise ConfigError.at(loc, f"unknown {what} key {k!r}", key=f"{key}.{k}" if key else k,
                                     hint=did_you_mean(k, allowed) or f"allowed keys: {', '.join(allowed)}")
