"""Located data: mappings and lists that remember the file and line they came from (a leaf module)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, TypeVar

from evalrun.errors import Location

T = TypeVar("T")


class LDict(dict[str, Any]):
    """A mapping that remembers where it and each of its keys came from."""

    file: str = ""
    line: int = 0
    key_lines: dict[str, int]
    ref_free: bool = False  # a config file whose text holds no `$ref` (set by readers.load_config_file)

    def loc(self, key: str | None = None) -> Location:
        """Location of `key` (or of the mapping itself)."""
        lines = getattr(self, "key_lines", {})
        return Location(self.file, lines.get(key, self.line) if key is not None else self.line)


class LList(list[Any]):
    """A sequence that remembers where it and each of its items came from."""

    file: str = ""
    line: int = 0
    item_lines: list[int]

    def loc(self, index: int | None = None) -> Location:
        lines = getattr(self, "item_lines", [])
        if index is not None and 0 <= index < len(lines):
            return Location(self.file, lines[index])
        return Location(self.file, self.line)


def located(obj: T, file: str, line: int) -> T:
    """`obj` (an LDict or LList) marked as written at file:line."""
    obj.file, obj.line = file, line  # type: ignore[attr-defined]
    return obj


def loc_of(node: Any, key: str | int | None = None) -> Location | None:
    """Location of `node[key]` (or `node`) when `node` came from a tracked file, else None."""
    if isinstance(node, LDict):
        return node.loc(key if isinstance(key, str) else None)
    if isinstance(node, LList):
        return node.loc(key if isinstance(key, int) else None)
    return None


_KEY_PART = re.compile(r"\[(\d+)\]|([^.\[\]]+)")


def key_parts(path: str) -> list[str | int]:
    """'tests[2].assert[0].x' -> ['tests', 2, 'assert', 0, 'x']."""
    return [int(m.group(1)) if m.group(1) is not None else m.group(2) for m in _KEY_PART.finditer(path)]


def loc_of_path(node: Any, path: str | Sequence[str | int]) -> tuple[Location | None, int]:
    """(location of the deepest part of the key path `path` ("vars.q", "[3].assert[0].value", or its parts) found in
    `node`, how many parts were found); (None, 0) when not even the first is there."""
    found, depth = None, 0
    for part in key_parts(path) if isinstance(path, str) else path:
        in_dict = isinstance(node, LDict) and isinstance(part, str) and part in node
        if not (in_dict or isinstance(node, LList) and isinstance(part, int) and part < len(node)):
            break
        found, node = node.loc(part), node[part]
        depth += 1
    return found, depth
