"""jsonschema errors of a config worded for people (FILE:LINE, key path, a hint): an `anyOf` failure descends into
the alternative that fits the value's shape; unknown keys get a did-you-mean."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from evalrun.config.readers.located import key_parts, loc_of_path
from evalrun.config.schema_source import runtime_schema
from evalrun.errors import ConfigError, Location, did_you_mean


def key_path(parts: Iterable[Any], prefix: str = "") -> str:
    """('tests', 2, 'assert', 0) -> 'tests[2].assert[0]'."""
    out = prefix
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


def locate(doc: Any, path: Sequence[Any], file: str, line: int = 0) -> Location:
    """Line of the deepest node on `path` that knows its location (`line` for untracked documents)."""
    return loc_of_path(doc, path)[0] or Location(file, getattr(doc, "line", line))


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
        alt = runtime_schema(None)["$defs"].get(alt["$ref"].rsplit("/", 1)[1], {})
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
    first = _explain(err, doc, file, prefix, line)
    dropped = getattr(first, "droppable", None)
    mapping = dropped[0] if dropped else None
    if not isinstance(mapping, dict) and first.message.startswith("unknown key "):
        mapping = _node_at(doc, first.key, prefix)
    if not isinstance(mapping, dict) or not first.message.startswith("unknown key "):
        return [first]
    path = _path_of(first.key or "", prefix)[:-1]
    allowed = list(getattr(first, "allowed", None) or err.schema.get("properties", {}))
    out = [first]
    for k in mapping:
        if k in allowed or f"unknown key {k!r}" == first.message:
            continue
        loc = locate(doc, [*path, k], file, line)
        near = did_you_mean(str(k), allowed)
        e = ConfigError.at(loc, f"unknown key {k!r}", key=key_path([*path, k], prefix),
                           hint=near or f"allowed keys: {', '.join(allowed)}")
        if near is None:
            e.droppable = (mapping, k, loc)  # type: ignore[attr-defined]
        out.append(e)
    return out


def _path_of(dotted: str, prefix: str) -> list[Any]:
    """The parts of a key path `key_path` made, `prefix` left out."""
    return key_parts(dotted[len(prefix):].lstrip(".") if prefix and dotted.startswith(prefix) else dotted)


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
        best = _best(err)
        if best is not None:
            return _explain(best, doc, file, prefix, line)
        wanted: list[str] = []
        for e in err.context:
            t = e.validator_value
            wanted.extend([t] if isinstance(t, str) else t)
        loc = locate(doc, err.absolute_path, file, line)
        return ConfigError.at(loc, f"expected {_want(dict.fromkeys(wanted))}, got {_kind(err.instance)}",
                              key=key_path(err.absolute_path, prefix) or None,
                              hint=err.schema.get("description"))
    path = list(err.absolute_path)
    where = key_path(path, prefix) or None
    if err.validator == "additionalProperties" and isinstance(err.instance, dict):
        allowed = list(err.schema.get("properties", {}))
        extra = [k for k in err.instance if k not in allowed]
        if extra:
            first = min(extra, key=lambda k: locate(doc, [*path, k], file, line).line)
            loc = locate(doc, [*path, first], file, line)
            near = did_you_mean(str(first), allowed)
            hint = near or f"allowed keys: {', '.join(allowed)}"
            error = ConfigError.at(loc, f"unknown key {first!r}", key=key_path([*path, first], prefix), hint=hint)
            error.allowed = allowed  # type: ignore[attr-defined]
            if near is None:  # not a misspelling of a valid key: promptfoo drops it (see lenient.py)
                error.droppable = (err.instance, first, loc)  # type: ignore[attr-defined]
            return error
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
        return ConfigError.at(loc, f"{err.instance!r} is not one of the allowed values", key=where, hint=close)
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
