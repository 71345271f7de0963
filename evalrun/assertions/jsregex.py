"""JavaScript regular expressions (no flags) run with Python's `re`, meaning what they mean in JavaScript.

    compile_js_regex(pattern) -> re.Pattern[str]        re.error when Python cannot compile the translation

JavaScript and Python differ on: `$` (JavaScript: end of input only; Python also before a final newline),
`\\d \\w \\b` (JavaScript: ASCII only), `[^]` / `[]`, named groups `(?<n>...)` and `\\k<n>`. The translation
rewrites exactly those; everything else is passed through (Python-only syntax such as `(?i)` still works).
"""

from __future__ import annotations

import functools
import re

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
