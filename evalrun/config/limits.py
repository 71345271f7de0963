"""Resource limits for config text: nesting depth (checked before libyaml sees the text) and alias expansion.

    json_depth(value)                       depth of parsed JSON data (no recursion)
    check_depth(text, file, parse_events)   ConfigError at the first line nested deeper than MAX_DEPTH
    AliasBudget(file).spend(n, line)        ConfigError once aliases have expanded to more than MAX_ALIAS_VALUES

libyaml's composer recurses in C, so a flow mapping nested 100,000 levels deep crashes the process (SIGSEGV)
before Python can catch anything. A cheap upper bound of the depth (`may_exceed`) runs on every file; only when it exceeds the limit is the
text walked event by event (libyaml's parser is iterative, so safe) to find the exact line, or to clear it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

from evalrun.errors import ConfigError

#: Deepest nesting of lists/mappings a config may hold (promptfoo configs rarely exceed 10).
MAX_DEPTH = 100
#: Values that YAML aliases (`*name`) may add to a document once expanded (the anchored copies are free).
MAX_ALIAS_VALUES = 1_000_000

_KEEP = b"[]{}"
_DROP = bytes(b for b in range(256) if b not in _KEEP)
_CHUNK = 1 << 20
_ONE_KIND = bytes.maketrans(b"{}", b"[]")


def may_exceed(text: str, limit: int = MAX_DEPTH, *, brackets_only: bool = False) -> bool:
    """False when the text surely nests no deeper than `limit` (cheap: no parsing).

    An upper bound: a bound of the deepest climb of brackets above an earlier low, plus the longest run of spaces and
    `-`/`?` indicators that starts a line (block nesting needs one of them per level; `brackets_only`: JSON,
    which nests by brackets alone).
    """
    rise = _bracket_rise_bound(text, limit)
    if rise > limit:
        return True
    if brackets_only:
        return False
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


def check_depth(text: str, file: str, parse_events: Callable[[str], Iterable[Any]], *,
                brackets_only: bool = False) -> None:
    """ConfigError at the first line where lists/mappings nest deeper than MAX_DEPTH."""
    if not may_exceed(text, brackets_only=brackets_only):
        return
    import yaml

    opens = (yaml.MappingStartEvent, yaml.SequenceStartEvent)
    closes = (yaml.MappingEndEvent, yaml.SequenceEndEvent)
    depth = 0
    for event in parse_events(text):
        if isinstance(event, opens):
            depth += 1
            if depth > MAX_DEPTH:
                raise ConfigError(f"lists and mappings are nested more than {MAX_DEPTH} levels deep", file=file,
                                  line=event.start_mark.line + 1 if event.start_mark else 0,
                                  hint="flatten the data")
        elif isinstance(event, closes):
            depth -= 1


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
