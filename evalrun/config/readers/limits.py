"""Resource limits for config text, in one place: nesting depth, alias expansion, size of a document read whole.

Both readers count the depth as they build (yamldoc's node walk, jsondoc's reader); libyaml itself stops at 1,000
levels while it parses, before its composer's C recursion could crash the process.
"""

from __future__ import annotations

from typing import Any

from evalrun.errors import ConfigError

#: Deepest nesting of lists/mappings a config may hold (promptfoo configs rarely exceed 10).
MAX_DEPTH = 100
#: Characters of a YAML/JSON document read whole (a config, a `file://` tests or vars file). Reading holds the
#: whole document with a line for every key and item: a block-style YAML test suite peaks at ~60x its text while
#: it is built (1.5 MB: 92 MB), flow-style ~22x (22 MB, 1,000,000 values: 481 MB), JSON ~18x. Past this, a suite
#: belongs in a JSONL or CSV file, which is read row by row in flat memory.
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
