"""JSON-pointer `$ref`s inside a config (`$ref: '#/assertionTemplates/name'`), resolved as promptfoo does: other
keys beside a `$ref` are laid over its target."""

from __future__ import annotations

from typing import Any

from evalrun.config.readers.located import LDict, loc_of
from evalrun.errors import ConfigError, Location
from evalrun.suggest import did_you_mean

_MAX_DEPTH = 32


def _unescape(part: str) -> str:
    return part.replace("~1", "/").replace("~0", "~")


def _target(doc: Any, pointer: str, loc: Location | None, key: str) -> Any:
    if not pointer.startswith("#/"):
        raise ConfigError.at(loc, f"unsupported $ref {pointer!r}", key=key,
                             hint="only pointers into this config are supported, such as "
                                  "'#/assertionTemplates/name'")
    node = doc
    for raw in pointer[2:].split("/"):
        part = _unescape(raw)
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            close = did_you_mean(part, [str(k) for k in node]) if isinstance(node, dict) else None
            raise ConfigError.at(loc, f"$ref {pointer!r} points at nothing ({part!r} not found)", key=key,
                                 hint=close or "check the name under the referenced key")
    return node


def _resolve(node: Any, doc: Any, key: str, depth: int, seen: tuple[str, ...]) -> Any:
    if depth > _MAX_DEPTH:
        raise ConfigError.at(loc_of(node), "$ref nesting is too deep", key=key)
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str):
            loc = loc_of(node, "$ref")
            if ref in seen:
                raise ConfigError.at(loc, f"$ref {ref!r} refers back to itself", key=f"{key}.$ref")
            target = _resolve(_target(doc, ref, loc, f"{key}.$ref"), doc, key, depth + 1, (*seen, ref))
            extra = {k: v for k, v in node.items() if k != "$ref"}
            if not extra:
                return target
            if not isinstance(target, dict):
                raise ConfigError.at(loc, f"$ref {ref!r} is not a mapping, so keys beside it cannot apply",
                                     key=f"{key}.$ref")
            merged = LDict({**target, **{k: _resolve(v, doc, f"{key}.{k}", depth + 1, seen)
                                         for k, v in extra.items()}})
            merged.file, merged.line = getattr(node, "file", ""), getattr(node, "line", 0)
            merged.key_lines = {**getattr(target, "key_lines", {}), **getattr(node, "key_lines", {})}
            return merged
        for k in list(node):
            node[k] = _resolve(node[k], doc, f"{key}.{k}" if key else str(k), depth + 1, seen)
        return node
    if isinstance(node, list):
        for i, item in enumerate(node):
            node[i] = _resolve(item, doc, f"{key}[{i}]", depth + 1, seen)
        return node
    return node


def has_refs(node: Any) -> bool:
    if isinstance(node, dict):
        return "$ref" in node or any(has_refs(v) for v in node.values())
    if isinstance(node, list):
        return any(has_refs(v) for v in node)
    return False


def resolve(doc: Any) -> Any:
    """Replace every `$ref` mapping in `doc` (in place where possible) by what it points at."""
    if getattr(doc, "ref_free", False) or not has_refs(doc):
        return doc
    sections = [k for k in doc if k not in ("assertionTemplates",)] if isinstance(doc, dict) else []
    for k in sections:
        doc[k] = _resolve(doc[k], doc, k, 0, ())
    return doc


__all__ = ["has_refs", "resolve"]
