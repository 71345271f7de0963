"""JSON and JSONL with lines: a small recursive-descent reader (strings through the json module's C `scanstring`)
for documents, orjson (evalrun/jsonfast.py) for JSONL rows; duplicate keys and deep nesting are errors."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from json.decoder import scanstring  # type: ignore[attr-defined]
from json.scanner import NUMBER_RE
from typing import Any

from evalrun.config.readers.located import MAX_DEPTH, LDict, LList, check_size, json_depth, located, not_utf8
from evalrun.errors import ConfigError
from evalrun.jsonfast import loads

_WS = re.compile(r"[ \t\n\r]*")
_CONSTANTS = {"null": None, "true": True, "false": False, "NaN": float("nan"), "Infinity": float("inf"),
              "-Infinity": float("-inf")}


class _Invalid(Exception):
    """Not valid JSON where the reader looked (json.loads words the error)."""


class _Reader:
    def __init__(self, text: str, file: str) -> None:
        self.s = text
        self.file = file
        self.at, self.at_line = 0, 1  # the last position asked for and its line: positions only grow
        self.depth = 0

    def line(self, pos: int) -> int:
        """The line of `pos`, counted on from the previous call (the reader asks in text order)."""
        self.at_line += self.s.count("\n", self.at, pos)
        self.at = pos
        return self.at_line

    def skip(self, i: int) -> int:
        return _WS.match(self.s, i).end()  # type: ignore[union-attr]

    def value(self, i: int) -> tuple[Any, int]:
        s = self.s
        c = s[i]
        if c == '"':
            return scanstring(s, i + 1, True)
        if c == "{" or c == "[":
            if self.depth >= MAX_DEPTH:
                raise ConfigError(f"lists and mappings are nested more than {MAX_DEPTH} levels deep",
                                  file=self.file, line=self.line(i), hint="flatten the data")
            self.depth += 1
            out = self.mapping(i) if c == "{" else self.sequence(i)
            self.depth -= 1
            return out
        m = NUMBER_RE.match(s, i)
        if m is not None and m.end() > i:
            integer, frac, exp = m.groups()
            return (float(integer + (frac or "") + (exp or "")) if frac or exp else int(integer)), m.end()
        for word, v in _CONSTANTS.items():
            if s.startswith(word, i):
                return v, i + len(word)
        raise _Invalid

    def mapping(self, start: int) -> tuple[LDict, int]:
        s = self.s
        d = located(LDict(), self.file, self.line(start))
        lines: dict[str, int] = {}
        d.key_lines = lines
        i = self.skip(start + 1)
        if s[i] == "}":
            return d, i + 1
        while True:
            if s[i] != '"':
                raise _Invalid
            key_line = self.line(i)
            key, i = scanstring(s, i + 1, True)
            if key in lines:
                raise ConfigError(f"duplicate key {key!r} (first defined on line {lines[key]})", file=self.file,
                                  line=key_line, key=key, hint="remove or rename one of them")
            lines[key] = key_line
            i = self.skip(i)
            if s[i] != ":":
                raise _Invalid
            d[key], i = self.value(self.skip(i + 1))
            i = self.skip(i)
            if s[i] == "}":
                return d, i + 1
            if s[i] != ",":
                raise _Invalid
            i = self.skip(i + 1)

    def sequence(self, start: int) -> tuple[LList, int]:
        s = self.s
        lst = located(LList(), self.file, self.line(start))
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
            if s[i] != ",":
                raise _Invalid
            i = self.skip(i + 1)


def parse_json(text: str, file: str) -> Any:
    """Parse JSON text with lines; ConfigError at FILE:LINE for a syntax error, a duplicate key or deep nesting."""
    check_size(len(text), file)
    reader = _Reader(text, file)
    try:
        value, end = reader.value(reader.skip(0))
        if reader.skip(end) == len(text):
            return value
    except (_Invalid, IndexError, ValueError):  # ValueError: scanstring's (a JSONDecodeError)
        pass
    try:  # not valid JSON: json.loads words the error
        json.loads(text)
    except json.JSONDecodeError as e:
        raise ConfigError(f"invalid JSON: {e.msg}", file=file, line=e.lineno,
                          hint="check commas, quotes and brackets") from None
    raise ConfigError("invalid JSON", file=file, line=reader.line(min(reader.at, len(text))),
                      hint="check commas, quotes and brackets")


def iter_jsonl(lines: Iterable[str], file: str, skip: int = 0) -> Iterator[tuple[Any, int]]:
    """(value, line number) for each non-blank line after the first `skip` ones (passed over unparsed);
    ConfigError at the line of invalid or too deeply nested JSON or undecodable text."""
    n = 0
    try:
        for n, line in enumerate(lines, 1):  # noqa: B007 - n is read after the loop on a decode error
            if line[:1] != "{" and not line.strip():  # a row starts with its "{"
                continue
            if skip:
                skip -= 1
                continue
            try:
                value = loads(line)
                # nesting deeper than MAX_DEPTH needs more than MAX_DEPTH opening brackets (counted at C speed)
                too_deep = line.count("[") + line.count("{") > MAX_DEPTH and json_depth(value) > MAX_DEPTH
            except json.JSONDecodeError:
                try:  # again without the line break, for the column the user sees
                    json.loads(line.rstrip("\r\n"))
                except json.JSONDecodeError as e:
                    raise ConfigError(f"invalid JSON on this line: {e.msg} (column {e.colno})", file=file, line=n,
                                      hint="JSONL needs one complete JSON object per line") from None
                raise  # pragma: no cover - it failed above
            except RecursionError:
                too_deep = True
            if too_deep:
                raise ConfigError(f"lists and mappings are nested more than {MAX_DEPTH} levels deep", file=file,
                                  line=n, hint="flatten the data")
            yield value, n
    except UnicodeDecodeError:
        raise not_utf8(getattr(lines, "name", None), file) from None


def parse_jsonl(text: str, file: str) -> LList:
    """Every row of a JSONL text, each mapping an LDict at its own line (its keys too)."""
    out = located(LList(), file, 1)
    out.item_lines = []
    for value, n in iter_jsonl(text.splitlines(), file):
        if isinstance(value, dict):
            row = located(LDict(value), file, n)
            row.key_lines = dict.fromkeys(value, n)
            value = row
        out.append(value)
        out.item_lines.append(n)
    return out
