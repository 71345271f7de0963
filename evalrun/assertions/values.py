"""How promptfoo reads assertion values: JavaScript string conversion, comma lists, strict deep equality."""

from __future__ import annotations

import math
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
