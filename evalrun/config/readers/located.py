"""Located data (mappings and lists that remember the file and line they came from), and what the readers refuse:
nesting depth, alias expansion, the size of a document read whole, text that is not UTF-8 (a ConfigError each)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeVar

from evalrun.errors import ConfigError, Location

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


def loc_of_path(node: Any, path: str | Sequence[str | int]) -> Location | None:
    """Location of the deepest part of the key path `path` ("vars.q", "[3].assert[0].value", or its parts) found in
    `node`; None when not even the first is there."""
    found = None
    if isinstance(path, str):  # 'tests[2].assert[0].x' -> ['tests', 2, 'assert', 0, 'x']
        path = [int(m[1]) if m[1] is not None else m[2] for m in _KEY_PART.finditer(path)]
    for part in path:
        in_dict = isinstance(node, LDict) and isinstance(part, str) and part in node
        if not (in_dict or isinstance(node, LList) and isinstance(part, int) and part < len(node)):
            break
        found, node = node.loc(part), node[part]
    return found

#: Deepest nesting of lists/mappings a config may hold (promptfoo configs rarely exceed 10).
MAX_DEPTH = 100
#: Characters of a YAML/JSON document read whole (memory: docs/design-notes.md, "config/"); past this, a suite
#: belongs in a JSONL or CSV file, read row by row.
MAX_DOC_CHARS = 32 * 1024 * 1024
#: Values that YAML aliases (`*name`) may add to a document once expanded (the anchored copies are free).
MAX_ALIAS_VALUES = 1_000_000


def json_depth(value: Any) -> int:
    """Nesting depth of plain JSON data, walked without recursion."""
    best = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            best = max(best, depth)
            stack.extend((x, depth + 1) for x in (item.values() if isinstance(item, dict) else item))
    return best


def check_size(chars: int, file: str) -> None:
    """ConfigError when a YAML/JSON document of `chars` characters is too large to read whole."""
    if chars > MAX_DOC_CHARS:
        raise ConfigError(f"this YAML/JSON file has {chars / 2**20:,.0f} MB: too large to read whole "
                          f"(the limit is {MAX_DOC_CHARS // 2**20} MB)", file=file, line=1,
                          hint="put a large test suite in a JSONL file (one test per line) or a CSV file, "
                               "referenced as `tests: file://tests.jsonl`: they are read row by row")


def bad_byte(data: bytes, start: int, display: str) -> ConfigError:
    """The error for the undecodable byte at `data[start]`."""
    return ConfigError(f"not UTF-8 text: byte 0x{data[start]:02x} cannot be decoded", file=display,
                       line=data[:start].count(b"\n") + 1,
                       hint="save the file as UTF-8 (binary files cannot be read as config or text)")


def not_utf8(path: str | Path | None, display: str) -> ConfigError:
    """The error for a stream that is not UTF-8: its decoder fails a buffer ahead of the bad byte, so the file is
    read again whole to find that byte's line (without a path, the error names no line)."""
    if path is not None:
        data = Path(path).read_bytes().removeprefix(b"\xef\xbb\xbf")
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as e:
            return bad_byte(data, e.start, display)
    return ConfigError(f"not UTF-8 text: {display}", file=display, hint="save the file as UTF-8")
