"""What the readers refuse, in one place: nesting depth, alias expansion, the size of a document read whole, and
text that is not UTF-8 (each a ConfigError at its line)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evalrun.errors import ConfigError

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


class AliasBudget:
    """Counts the values YAML aliases add once expanded; past MAX_ALIAS_VALUES it is a ConfigError there."""

    def __init__(self, file: str, limit: int = MAX_ALIAS_VALUES) -> None:
        self.file = file
        self.limit = limit
        self.spent = 0

    def spend(self, values: int, line: int) -> None:
        self.spent += values
        if self.spent > self.limit:
            raise ConfigError(f"YAML aliases (*name) expand to more than {self.limit:,} values", file=self.file,
                              line=line, key=None,
                              hint="an alias copies its whole anchored value: nested aliases multiply "
                                   "(an 'alias bomb'); write the data out, or reuse less")


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
