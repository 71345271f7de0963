"""JSON with line numbers: LDict / LList (as the YAML reader builds them) from JSON text, without the YAML parser.

    parse(text, file) -> Any     text must already be valid JSON (json.loads said so, with its error message)

A small recursive-descent reader over the text: strings go through the json module's C `scanstring` (escapes,
surrogate pairs such as `\\ud83d\\ude00` included), numbers through its number pattern, and every mapping, key and
list item gets its line. About 5x faster than YAML-parsing the same text (which was how `.json` got its lines).
Duplicate keys are an error naming both lines (json.loads keeps the last one silently).
"""

from __future__ import annotations

import bisect
import re
from json.decoder import scanstring  # type: ignore[attr-defined]
from json.scanner import NUMBER_RE
from typing import Any

from evalrun.config.yamlsrc import LDict, LList
from evalrun.errors import ConfigError

_WS = re.compile(r"[ \t\n\r]*")
_CONSTANTS = {"null": None, "true": True, "false": False, "NaN": float("nan"), "Infinity": float("inf"),
              "-Infinity": float("-inf")}


class _Reader:
    def __init__(self, text: str, file: str) -> None:
        self.s = text
        self.file = file
        self.newlines = [m.start() for m in re.finditer("\n", text)]

    def line(self, pos: int) -> int:
        return bisect.bisect_left(self.newlines, pos) + 1

    def skip(self, i: int) -> int:
        return _WS.match(self.s, i).end()  # type: ignore[union-attr]

    def value(self, i: int) -> tuple[Any, int]:
        s = self.s
        c = s[i]
        if c == '"':
            return scanstring(s, i + 1, True)
        if c == "{":
            return self.mapping(i)
        if c == "[":
            return self.sequence(i)
        m = NUMBER_RE.match(s, i)
        if m is not None and m.end() > i:
            integer, frac, exp = m.groups()
            return (float(integer + (frac or "") + (exp or "")) if frac or exp else int(integer)), m.end()
        for word, v in _CONSTANTS.items():
            if s.startswith(word, i):
                return v, i + len(word)
        raise ConfigError("invalid JSON", file=self.file, line=self.line(i))  # json.loads accepted it: unreachable

    def mapping(self, start: int) -> tuple[LDict, int]:
        s = self.s
        d = LDict()
        d.file, d.line = self.file, self.line(start)
        lines: dict[str, int] = {}
        d.key_lines = lines
        i = self.skip(start + 1)
        if s[i] == "}":
            return d, i + 1
        while True:
            key_line = self.line(i)
            key, i = scanstring(s, i + 1, True)
            if key in lines:
                raise ConfigError(f"duplicate key {key!r} (first defined on line {lines[key]})", file=self.file,
                                  line=key_line, key=key, hint="remove or rename one of them")
            lines[key] = key_line
            i = self.skip(self.skip(i) + 1)  # past ':'
            d[key], i = self.value(i)
            i = self.skip(i)
            if s[i] == "}":
                return d, i + 1
            i = self.skip(i + 1)  # past ','

    def sequence(self, start: int) -> tuple[LList, int]:
        s = self.s
        lst = LList()
        lst.file, lst.line = self.file, self.line(start)
        lines: list[int] = []
        lst.item_lines = lines
        i = self.skip(start + 1)
        if s[i] == "]":
            return lst, i + 1
        while True:
            lines.append(self.line(i))
            v, i = self.value(i)
            lst.append(v)
            i = self.skip(i)
            if s[i] == "]":
                return lst, i + 1
            i = self.skip(i + 1)


def parse(text: str, file: str) -> Any:
    reader = _Reader(text, file)
    value, _ = reader.value(reader.skip(0))
    return value
