"""How promptfoo reads assertion values, with JavaScript's semantics: string conversion, comma lists, strict
deep equality, and regular expressions.

JavaScript regexes (no flags) run with Python's `re`: `compile_js_regex` rewrites what the two differ on, `$`
(JavaScript: end of input only; Python also before a final newline), `\\d \\w \\b` (JavaScript: ASCII only),
`[^]` / `[]`, named groups `(?<n>...)` and `\\k<n>`; everything else is passed through (Python-only syntax such
as `(?i)` still works).
"""

from __future__ import annotations

import functools
import math
import re
from typing import Any


def js_str(value: Any) -> str:
    """`String(value)` as JavaScript prints it: true/false, null, 5 (not 5.0), 1.5."""
    if value is True:
        return "true"
    if value is False:
        return "false"
    if value is None:
        return "null"
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        if value.is_integer() and abs(value) < 1e21:
            return str(int(value))
        return repr(value)
    return str(value)


def parse_csv_values(value: str) -> list[str]:
    """Split a contains-any/all string on commas; double-quoted fields keep commas (`\\"` and `""` escape)."""
    out: list[str] = []
    i, n = 0, len(value)
    while i < n:
        while i < n and (value[i].isspace() or value[i] == ","):
            i += 1
        if i >= n:
            break
        if value[i] == '"':
            i += 1
            field: list[str] = []
            closed = False
            while i < n:
                c = value[i]
                if c == "\\" and i + 1 < n and value[i + 1] in '"\\':
                    field.append(value[i + 1])
                    i += 2
                elif c == '"' and i + 1 < n and value[i + 1] == '"':
                    field.append('"')
                    i += 2
                elif c == '"':
                    i += 1
                    closed = True
                    break
                else:
                    field.append(c)
                    i += 1
            if not closed:
                raise ValueError(f"unterminated quoted field in {value!r}")
            out.append("".join(field))
            while i < n and value[i].isspace():
                i += 1
            if i < n and value[i] != ",":
                raise ValueError(f"expected a comma after a quoted field in {value!r}")
        else:
            j = i
            while j < n and value[j] != ",":
                j += 1
            out.append(value[i:j].strip())
            i = j
    return out


def strict_equal(a: Any, b: Any) -> bool:
    """Deep equality where booleans never equal numbers (like node's isDeepStrictEqual on JSON data)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(strict_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(strict_equal(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


_W = "A-Za-z0-9_"
_OUTSIDE = {
    "d": "[0-9]", "D": "[^0-9]", "w": f"[{_W}]", "W": f"[^{_W}]",
    "b": f"(?:(?<=[{_W}])(?![{_W}])|(?<![{_W}])(?=[{_W}]))",
    "B": f"(?:(?<=[{_W}])(?=[{_W}])|(?<![{_W}])(?![{_W}]))",
}
_INSIDE = {"d": "0-9", "w": _W}


def translate(pattern: str) -> str:
    """The Python `re` pattern equivalent to a JavaScript pattern."""
    out: list[str] = []
    i, n, in_class = 0, len(pattern), False
    while i < n:
        c = pattern[i]
        if c == "\\" and i + 1 < n:
            nxt = pattern[i + 1]
            if nxt == "k" and not in_class and pattern.startswith("<", i + 2) and ">" in pattern[i + 3:]:
                end = pattern.index(">", i + 3)
                out.append(f"(?P={pattern[i + 3:end]})")
                i = end + 1
                continue
            table = _INSIDE if in_class else _OUTSIDE
            out.append(table.get(nxt, c + nxt))
            i += 2
            continue
        if in_class:
            if c == "]":
                in_class = False
            out.append("\\[" if c == "[" else c)
        elif c == "[":
            if pattern.startswith("[^]", i):
                out.append(r"[\s\S]")
                i += 3
                continue
            if pattern.startswith("[]", i):
                out.append("(?!)")
                i += 2
                continue
            in_class = True
            out.append(c)
            if pattern.startswith("[^", i):
                out.append("^")
                i += 1
        elif c == "$":
            out.append(r"\Z")
        elif c == "(" and pattern.startswith("(?<", i) and pattern[i + 3:i + 4] not in ("=", "!"):
            out.append("(?P<")
            i += 3
            continue
        else:
            out.append(c)
        i += 1
    return "".join(out)


@functools.lru_cache(maxsize=1024)
def compile_js_regex(pattern: str) -> re.Pattern[str]:
    """Compile a JavaScript regex (no flags) with Python's `re`; memoised (a regex assertion runs on every case)."""
    return re.compile(translate(pattern))
