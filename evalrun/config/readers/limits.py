"""Resource limits for config text, in one place: nesting depth, alias expansion, size of a document read whole.

libyaml's composer recurses in C, so a flow mapping nested 100,000 levels deep crashes the process (SIGSEGV)
on older libyaml versions before Python can catch anything (newer ones stop at 1,000 levels with their own
error). `may_exceed` runs on every YAML file; only when it says so is the text walked event by event
(readers/yamldoc.py) to find the exact line. JSON is read by evalrun's own reader, which counts as it goes.
"""

from __future__ import annotations

import re
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

_KEEP = b"[]{}"
_DROP = bytes(b for b in range(256) if b not in _KEEP)
_CHUNK = 1 << 20
_ONE_KIND = bytes.maketrans(b"{}", b"[]")


def may_exceed(text: str, limit: int = MAX_DEPTH) -> bool:
    """False when the text surely nests no deeper than `limit` (cheap: no parsing).

    An upper bound: a bound of the deepest climb of brackets above an earlier low, plus the longest run of spaces and
    `-`/`?` indicators that starts a line (block nesting needs one of them per level).
    """
    rise = _bracket_rise_bound(text, limit)
    if rise > limit:
        return True
    run = rf"[ \-?]{{{limit - rise + 1},}}"  # a line starting with that many indicators (`\n` first: a fast scan)
    return re.match(run, text) is not None or re.search(rf"\n{run}", text) is not None


def _bracket_rise_bound(text: str, limit: int) -> int:
    """An upper bound of how far brackets climb above an earlier low (exact enough to be <= `limit` when it is).

    Innermost `[]` pairs (both kinds of bracket as one) are removed pass after pass: a balanced stretch vanishes
    after as many passes as it nests deep, and what stays is `]...][...[`. A climb is made of pairs still open at
    its top (at most the passes made) and of brackets never closed (at most the `[` left): their sum bounds it.
    Past `limit` passes it gives up (returns limit + 1) and the caller walks the text exactly."""
    brackets = b"".join(text[start:start + _CHUNK].encode("utf-8", "surrogatepass").translate(_ONE_KIND, _DROP)
                        for start in range(0, len(text), _CHUNK))  # in slices: no whole-text UTF-8 copy
    passes = 0
    while b"[]" in brackets:
        if passes == limit:
            return limit + 1
        brackets = brackets.replace(b"[]", b"")
        passes += 1
    return passes + brackets.count(b"[")


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
