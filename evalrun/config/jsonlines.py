"""JSON with line numbers: LDict / LList (as the YAML reader builds them) from JSON text, without the YAML parser.

    parse(text, file) -> Any     text must already be valid JSON (json.loads said so, with its error message)

A small recursive-descent reader over the text: strings go through the json module's C `scanstring` (escapes,
surrogate pairs such as `\\ud83d\\ude00` included), numbers through its number pattern, and every mapping, key and
list item gets its line. About 5x faster than YAML-parsing the same text (which was how `.json` got its lines).
Duplicate keys are an error naming both lines (json.loads keeps the last one silently).

    parse_shallow(text, file) -> Any    large files: lines kept for the top `SHALLOW_DEPTH` levels only

A large config's deeper values (a test's `vars`, its `assert` list) are read by the json module's C scanner as
plain dicts and lists: each test knows its own line; its keys and assertions share that line (as a JSONL row's
do). An error is pointed at the exact line afterwards: `relocate(err)` re-reads the
file with every line (only then) and moves the error to the deepest node its key path names.
"""

from __future__ import annotations

import json
import re
from json.decoder import scanstring  # type: ignore[attr-defined]
from json.scanner import NUMBER_RE, c_make_scanner, py_make_scanner  # type: ignore[attr-defined]
from typing import Any

from evalrun.config.yamlsrc import LDict, LList, loc_of_path
from evalrun.errors import ConfigError, Location

_WS = re.compile(r"[ \t\n\r]*")
_CONSTANTS = {"null": None, "true": True, "false": False, "NaN": float("nan"), "Infinity": float("inf"),
              "-Infinity": float("-inf")}


class _Duplicate(Exception):
    """A deep mapping repeats a key: the full reader words the error with both lines."""


class _Invalid(Exception):
    """Not valid JSON where the reader looked (json.loads words the error)."""


#: parse_shallow's answer when the text is not plain valid JSON: read it the careful way (json.loads, parse).
FALLBACK: Any = object()


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    d = dict(pairs)
    if len(d) != len(pairs):
        raise _Duplicate
    return d


_DECODER = json.JSONDecoder(object_pairs_hook=_no_duplicates)
_SCAN = c_make_scanner(_DECODER) if c_make_scanner is not None else py_make_scanner(_DECODER)

#: Levels read with their lines by parse_shallow: the config mapping and its `tests` list (each test's line), or
#: a tests file's list and each test mapping.
SHALLOW_DEPTH = 2
#: Texts at least this long are read shallowly (smaller ones with every line: the cost is negligible there).
SHALLOW_MIN_CHARS = 256 * 1024
#: Shallowly read files (display name -> text), for relocate(); cleared by forget().
_SHALLOW: dict[str, str] = {}
_FULL: dict[str, Any] = {}  # their full reading, made on the first error or warning


class _Reader:
    def __init__(self, text: str, file: str, max_depth: int = 10**9) -> None:
        self.s = text
        self.file = file
        self.at, self.at_line = 0, 1  # the last position asked for and its line: positions only grow
        self.depth = 0
        self.max_depth = max_depth

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
            if self.depth >= self.max_depth:
                return _SCAN(s, i)
            self.depth += 1
            try:
                return self.mapping(i) if c == "{" else self.sequence(i)
            finally:
                self.depth -= 1
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
        d = LDict()
        d.file, d.line = self.file, self.line(start)
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
            if s[i] != ",":
                raise _Invalid
            i = self.skip(i + 1)


def parse(text: str, file: str) -> Any:
    reader = _Reader(text, file)
    value, _ = reader.value(reader.skip(0))
    return value


def parse_shallow(text: str, file: str) -> Any:
    """`parse` with lines for the top SHALLOW_DEPTH levels only (plain dicts/lists below), checking the syntax
    as it goes; FALLBACK for anything irregular (a syntax error, a duplicate key, too deep): the caller then
    reads the text the careful way (json.loads for the syntax error's words, then `parse`)."""
    reader = _Reader(text, file, SHALLOW_DEPTH)
    try:
        value, end = reader.value(reader.skip(0))
        if reader.skip(end) != len(text):
            return FALLBACK
    except Exception:  # noqa: BLE001 - any irregularity: the careful path words it exactly as before
        return FALLBACK
    _SHALLOW[file] = text
    return value


def forget() -> None:
    """Drop the texts kept for relocate() (after a load)."""
    _SHALLOW.clear()
    _FULL.clear()


def relocate(err: ConfigError) -> None:
    """Point `err` at the line of the deepest node its key path names, when it is in a shallowly read file.

    Only nodes below the shallow levels move the line (the levels above already had their exact lines). Each
    error of a ConfigErrors is moved, and errors that shared a line (one test's) are put back in line order."""
    from evalrun.errors import ConfigErrors

    if isinstance(err, ConfigErrors):
        if not any(e.file in _SHALLOW for e in err.errors):
            return
        before = [(e.file, e.line) for e in err.errors]
        for e in err.errors:
            _relocate_one(e)
        ordered: list[ConfigError] = []
        start = 0
        for i in range(1, len(before) + 1):  # runs of errors that had one line: in their new lines' order
            if i == len(before) or before[i] != before[start]:
                ordered += sorted(err.errors[start:i], key=lambda r: r.line)
                start = i
        err.errors = ordered
        first = ordered[0]
        err.message, err.file, err.line, err.key, err.hint = first.message, first.file, first.line, first.key, \
            first.hint
        return
    _relocate_one(err)


def _relocate_one(err: ConfigError) -> None:
    text = _SHALLOW.get(err.file or "")
    if text is None or not err.key:
        return

    node: Any = _FULL.get(err.file or "")
    if node is None:
        node = _FULL[err.file or ""] = parse(text, err.file or "")
    found, depth = loc_of_path(node, err.key)
    if found is not None and found.line and depth > SHALLOW_DEPTH:
        err.line = found.line


def locate(loc: Location, key: str) -> Location:
    """`loc` moved to the line of `key` when it lies inside a shallowly read file (as relocate does)."""
    if loc.file not in _SHALLOW:
        return loc
    err = ConfigError("", file=loc.file, line=loc.line, key=key)
    relocate(err)
    return Location(loc.file, err.line)
