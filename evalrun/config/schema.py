"""Validate a parsed config (or a test file) against the schema; errors mapped back to FILE:LINE key.path.

jsonschema is imported lazily, once. The first error in file order is reported, rewritten in plain words:
unknown keys get a did-you-mean, `anyOf` failures descend into the alternative that fits the value's shape.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import cache
from typing import Any

from evalrun.config.schema_source import build_schema
from evalrun.config.yamlsrc import LDict, LList
from evalrun.errors import ConfigError, Location
from evalrun.suggest import did_you_mean


def key_path(parts: Iterable[Any], prefix: str = "") -> str:
    """('tests', 2, 'assert', 0) -> 'tests[2].assert[0]'."""
    out = prefix
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


@cache
def _validator(definition: str | None) -> Any:
    from jsonschema import Draft202012Validator

    schema = build_schema(None)
    if definition is not None:  # validate against one named definition, keeping $defs resolvable
        schema = {"$defs": schema["$defs"], **schema["$defs"][definition]}
    return Draft202012Validator(schema)


def _locate(doc: Any, path: Sequence[Any], file: str) -> Location:
    """Line of the deepest node on `path` that knows its location."""
    node, loc = doc, Location(file, getattr(doc, "line", 0))
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


def _explain(err: Any, doc: Any, file: str, prefix: str) -> ConfigError:
    if err.validator in ("anyOf", "oneOf") and err.context:
        fitting = [e for e in err.context if _branch_fits(e)]
        if fitting:
            best = max(fitting, key=lambda e: len(e.absolute_path))
            return _explain(best, doc, file, prefix)
        wanted: list[str] = []
        for e in err.context:
            t = e.validator_value
            wanted.extend([t] if isinstance(t, str) else t)
        loc = _locate(doc, err.absolute_path, file)
        return ConfigError.at(loc, f"expected {_want(dict.fromkeys(wanted))}, got {_kind(err.instance)}",
                              key=key_path(err.absolute_path, prefix) or None,
                              hint=err.schema.get("description"))
    path = list(err.absolute_path)
    where = key_path(path, prefix) or None
    if err.validator == "additionalProperties" and isinstance(err.instance, dict):
        allowed = list(err.schema.get("properties", {}))
        extra = [k for k in err.instance if k not in allowed]
        if extra:
            first = min(extra, key=lambda k: _locate(doc, [*path, k], file).line)
            loc = _locate(doc, [*path, first], file)
            hint = did_you_mean(str(first), allowed) or f"allowed keys: {', '.join(allowed)}"
            return ConfigError.at(loc, f"unknown key {first!r}", key=key_path([*path, first], prefix), hint=hint)
    loc = _locate(doc, path, file)
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


def validate(doc: Any, *, file: str, definition: str | None = None, prefix: str = "") -> None:
    """Raise the first (in file order) schema violation of `doc` as a ConfigError."""
    errors = list(_validator(definition).iter_errors(doc))
    if not errors:
        return
    explained = [_explain(e, doc, file, prefix) for e in errors]
    raise min(explained, key=lambda e: (e.line or 10**9))


def check_keys(node: Any, allowed: Sequence[str], *, what: str, key: str, loc: Location | None) -> None:
    """Unknown keys of a mapping built outside the schema (CSV rows, generator output)."""
    if isinstance(node, dict):
        for k in node:
            if k not in allowed:
                raise ConfigError.at(loc, f"unknown {what} key {k!r}", key=f"{key}.{k}" if key else k,
                                     hint=did_you_mean(k, allowed) or f"allowed keys: {', '.join(allowed)}")
