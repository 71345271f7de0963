"""Large `file://` YAML / JSON test files read as a stream: a top-level list of tests, one item at a time.

    streams(path) -> bool                                 the file is larger than STREAM_MIN_BYTES and its top
                                                          level is a list (one test mapping: read whole)
    StreamedDoc(path, display, base_dir, loc=, key=)      a StreamedTests over the list's items (re-iterable)

YAML items are built from libyaml's parser events (as yamlevents.py builds whole documents): LDict / LList with
the lines, the YAML 1.2 core scalars and the key rules of the whole-file reader. Anchors are kept for the whole
pass, so an alias may name an anchor of an earlier item. JSON items are read from a sliding buffer by the
jsonlines reader, every mapping, key and list item with its line. Each item gets the location (file:line, key
`[i]`) and the checks the whole-file path gives it.

Anything the stream does not handle exactly as the whole-file reader would (a syntax error, an explicit tag,
a merge key `<<`, an alias to an unknown anchor or past the alias budget, a duplicate key, nesting past
MAX_DEPTH, text after the list, a decoding error) switches the file to the whole-file path from that item on,
which then gives exactly its values and errors (the items before were already identical). An error in a test is
reported when the stream reaches it, so of several errors in one file the first in file order is reported.
"""

from __future__ import annotations

import json
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

import yaml

from evalrun.config.limits import MAX_ALIAS_VALUES, MAX_DEPTH
from evalrun.config.teststream import StreamedTests
from evalrun.config.yamlsrc import _KNOWN, _STR, LDict, LList, _core_scalar, _Loader, _tag
from evalrun.errors import ConfigError, Location

#: Files larger than this many bytes are streamed; smaller ones are read whole, as before.
STREAM_MIN_BYTES = 1 << 20
_CHUNK = 1 << 16  # characters read at a time (JSON) / handed to libyaml (YAML reads its own)


class _Fallback(Exception):
    """The stream cannot go on exactly as the whole-file reader would: read the file whole."""


def _kind(path: Path) -> str:
    return "json" if path.suffix.lower() == ".json" else "yaml"


def streams(path: Path) -> bool:
    """Whether `path` is a large test file holding a top-level list (anything odd: the whole-file path)."""
    try:
        if path.stat().st_size <= STREAM_MIN_BYTES:
            return False
        with open(path, encoding="utf-8-sig") as f:
            if _kind(path) == "json":
                head = f.read(_CHUNK).lstrip(" \t\r\n")
                return head.startswith("[")
            loader = _Loader(f)
            try:
                loader.get_event()  # StreamStart
                if not isinstance(loader.get_event(), yaml.DocumentStartEvent):
                    return False
                ev = loader.get_event()
                return isinstance(ev, yaml.SequenceStartEvent) and ev.tag in (None, "!") and ev.anchor is None
            finally:
                loader.dispose()
    except Exception:  # noqa: BLE001 - unreadable or invalid: the whole-file path words the error
        return False


class StreamedDoc(StreamedTests):
    """The tests of one large YAML/JSON list file, produced on demand."""

    def __init__(self, path: Path, display: str, base_dir: str, *, loc: Location | None, key: str) -> None:
        super().__init__(path, display, base_dir, loc=loc, key=key)
        self.whole = False  # True once the stream fell back: later passes read the file whole from the start

    def __repr__(self) -> str:
        return f"<StreamedDoc {self.display}>"

    def __iter__(self) -> Generator[Any, None, None]:
        check = not self.checked
        count = 0
        for part in self._whole(0) if self.whole else self._stream(check):
            yield part
            count += 1
        self.checked, self.rows = True, count

    def specs(self, start: int, default: Any, *, lo: int = 0, hi: int | None = None) -> Generator[Any, None, int]:
        """The tests as TestSpecs numbered from `start`, `default` merged, only those numbered lo..hi-1 (the
        items before are read but not built; a file outside the window is not opened): the items are built as
        above (the lean row path of JSONL/CSV rows reads flat rows, not located YAML/JSON data)."""
        from evalrun.config.merge import merge_tests
        from evalrun.config.rowspec import to_spec

        n = self.rows
        if n is not None and (start + n <= lo or (hi is not None and start >= hi)):
            return start + n
        i = start
        parts = self.__iter__()
        try:
            for part in parts:
                if hi is not None and i >= hi:
                    break
                if i >= lo:
                    yield to_spec(merge_tests(default, part), i)
                i += 1
        finally:
            parts.close()
        return i if n is None else start + n

    def _stream(self, check: bool) -> Iterator[Any]:
        from evalrun.config.schema import validate
        from evalrun.config.testcases import Ctx, part_from_node
        from evalrun.config.yamlsrc import loc_of

        ctx, display = Ctx(self.base_dir), self.display
        try:  # universal newlines, as the whole-file reader reads the text
            f = open(self.path, encoding="utf-8-sig")  # noqa: SIM115 - closed below
        except OSError:
            self.whole = True  # the whole-file reader words the error
            yield from self._whole(0)
            return
        with f:
            items = _json_items(f, display, check) if _kind(self.path) == "json" else _yaml_items(f, display)
            i = 0
            while True:
                try:
                    item, line, exact = next(items)
                except StopIteration:
                    return
                except _Fallback:
                    self.whole = True
                    break
                key = f"[{i}]"
                loc = Location(display, line)
                if not isinstance(item, dict):
                    raise ConfigError.at(loc, f"expected a test mapping, got {type(item).__name__}", key=key,
                                         hint="a tests file holds a list of {vars, assert, ...} mappings")
                if not check:
                    yield part_from_node(item, ctx, loc=loc_of(item) or loc, key=key)
                elif exact is None:
                    validate(item, file=display, definition="test", prefix=key)
                    yield part_from_node(item, ctx, loc=loc_of(item) or loc, key=key)
                else:
                    yield _checked(item, exact, ctx, display, key, loc)
                i += 1
        yield from self._whole(i)

    def _whole(self, start: int) -> Iterator[Any]:
        """The tests from item `start` on, read the whole-file way."""
        from evalrun.config import files
        from evalrun.config.testcases import Ctx, _from_file_data

        data = files.read_value(self.path, self.display, loc=self.loc, key=self.key)
        yield from _from_file_data(data, Ctx(self.base_dir), self.display)[start:]


def _checked(item: Any, exact: Any, ctx: Any, display: str, key: str, loc: Location) -> Any:
    """A JSON item (read with lines for its own keys only) checked and built; when that raises or warns, the item
    read again with every line (`exact()`) and checked again, so the error or warning names its exact line, as
    the whole-file path's relocate() does."""
    from evalrun.config import lenient
    from evalrun.config.schema import validate
    from evalrun.config.testcases import part_from_node
    from evalrun.config.yamlsrc import loc_of

    warnings = lenient._STATE["warnings"]
    assert isinstance(warnings, list)
    before = len(warnings)
    try:
        validate(item, file=display, definition="test", prefix=key)
        part = part_from_node(item, ctx, loc=loc_of(item) or loc, key=key)
        if len(warnings) == before:
            return part
    except ConfigError:
        pass
    del warnings[before:]
    item = exact()
    validate(item, file=display, definition="test", prefix=key)
    return part_from_node(item, ctx, loc=loc_of(item) or loc, key=key)


# ---- YAML: one item at a time from parser events --------------------------------------------------------------

def _scalar(ev: Any, resolvers: dict[Any, Any]) -> tuple[Any, str]:
    """A scalar event's value and tag, as yamlsrc's _Loader resolves it (YAML 1.2 core schema)."""
    tag, value = ev.tag, ev.value
    if tag is None or tag == "!":
        tag = _STR
        if ev.implicit[0]:
            for t, regexp in resolvers.get(value[:1], ()):
                if regexp.match(value):
                    tag = t
                    break
    if tag == _STR:
        return value, tag
    if tag not in _KNOWN:  # merge keys, timestamps, binary, custom tags
        raise _Fallback
    try:
        return _core_scalar(tag, value), tag
    except ValueError:
        raise _Fallback from None


def _yaml_items(f: Any, file: str) -> Iterator[tuple[Any, int, None]]:
    """(item, line) for each item of the top-level list; _Fallback where the whole-file reader must decide."""
    loader = _Loader(f)
    try:
        get = loader.get_event
        get()  # StreamStart
        if not isinstance(get(), yaml.DocumentStartEvent):
            raise _Fallback
        ev = get()
        if not isinstance(ev, yaml.SequenceStartEvent) or ev.tag not in (None, "!") or ev.anchor is not None:
            raise _Fallback
        builder = _ItemBuilder(loader, file)
        while True:
            ev = get()
            if type(ev) is yaml.SequenceEndEvent:
                break
            yield (*builder.item(ev), None)
        if not isinstance(get(), yaml.DocumentEndEvent) or not isinstance(get(), yaml.StreamEndEvent):
            raise _Fallback  # a second document: an error worded by the whole-file reader
    except (yaml.YAMLError, UnicodeError, ValueError, RecursionError):
        raise _Fallback from None
    finally:
        loader.dispose()


class _ItemBuilder:
    """Builds list items from events; anchors and the alias budget last for the whole document."""

    def __init__(self, loader: Any, file: str) -> None:
        self.get = loader.get_event
        self.resolvers = loader.yaml_implicit_resolvers
        self.file = file
        self.anchors: dict[str, tuple[Any, int, int]] = {}  # name -> (value, values once expanded, line)
        self.spent = 0  # values that aliases of lists/mappings added (the whole-file reader's AliasBudget)

    def item(self, ev: Any) -> tuple[Any, int]:
        get, resolvers, anchors = self.get, self.resolvers, self.anchors
        nokey = _Fallback
        stack: list[list[Any]] = []  # frames: [LDict or LList, pending key (nokey: next scalar is a key), size, anchor]
        while True:
            cls = type(ev)
            tag = None
            if cls is yaml.ScalarEvent:
                value, tag = _scalar(ev, resolvers)
                line, size = ev.start_mark.line + 1, 1
                if ev.anchor is not None:
                    anchors[ev.anchor] = (value, 0, line)
            elif cls is yaml.MappingStartEvent or cls is yaml.SequenceStartEvent:
                if ev.tag not in (None, "!") or len(stack) + 2 > MAX_DEPTH:  # +2: the top list and this one
                    raise _Fallback
                new: Any
                if cls is yaml.MappingStartEvent:
                    new = LDict()
                    new.key_lines = {}
                else:
                    new = LList()
                    new.item_lines = []
                _tag(new, self.file, ev.start_mark.line + 1)
                if ev.anchor is not None:
                    anchors.pop(ev.anchor, None)  # an alias inside its own anchor: worded by the whole-file reader
                stack.append([new, nokey, 1, ev.anchor])
                ev = get()
                continue
            elif cls is yaml.MappingEndEvent or cls is yaml.SequenceEndEvent:
                value, _, size, anchor = stack.pop()
                line = value.line
                if anchor is not None:
                    anchors[anchor] = (value, size, line)
            elif cls is yaml.AliasEvent:
                found = anchors.get(ev.anchor)
                if found is None:
                    raise _Fallback
                value, size, line = found
                if size:
                    self.spent += size
                    if self.spent > MAX_ALIAS_VALUES:
                        raise _Fallback
                else:
                    size = 1
                if stack and type(stack[-1][0]) is LDict and stack[-1][1] is nokey:
                    raise _Fallback  # an alias as a key
            else:  # pragma: no cover - libyaml sends no other event inside a list
                raise _Fallback
            if not stack:
                return value, line
            top = stack[-1]
            container = top[0]
            if type(container) is LList:
                container.append(value)
                container.item_lines.append(line)
                top[2] += size
            elif top[1] is nokey:  # this value is a key
                if tag is None:  # a list or mapping as a key
                    raise _Fallback
                written = value if isinstance(value, str) else "null" if value is None else str(value)
                lines = container.key_lines
                if written in lines:
                    raise _Fallback  # a duplicate key: worded by the whole-file reader
                lines[written] = line
                top[1] = value if tag == _STR else str(value)
            else:
                container[top[1]] = value
                top[1] = nokey
                top[2] += 1 + size
            ev = get()


# ---- JSON: one item at a time from a sliding buffer ------------------------------------------------------------

def _json_items(f: Any, file: str, keyed: bool) -> Iterator[tuple[Any, int, Any]]:
    """(item, line, exact) for each item of the top-level array. `keyed` (the checking pass): read by jsonlines'
    reader as the whole-file path reads a large file, each test with its own and its keys' lines, the values
    below them by the json module's C scanner; else (later passes, where nothing is reported) all by the C
    scanner, each test with its own line (as a JSONL row). `exact()` reads the item again with every line (while
    the generator waits at this item)."""
    from evalrun.config.jsonlines import _SCAN, _WS, _Duplicate, _Reader

    def exact_reader(buf: str, p: int, at: int, at_line: int) -> Any:
        def exact() -> Any:
            reader = _Reader(buf, file)
            reader.at, reader.at_line = at, at_line
            return reader.value(p)[0]
        return exact

    def skip(s: str, i: int) -> int:
        return _WS.match(s, i).end()  # type: ignore[union-attr]

    try:
        buf = f.read(_CHUNK)
        eof = not buf

        def more() -> None:
            nonlocal buf, eof
            got = f.read(max(_CHUNK, len(buf)))  # doubling: an item larger than a chunk costs linear time
            eof = not got
            buf += got

        at, at_line = 0, 1  # a position in buf and its line: lines are counted on from there
        pos = skip(buf, 0)
        while pos >= len(buf) and not eof:
            more()
            pos = skip(buf, pos)
        if buf[pos:pos + 1] != "[":
            raise _Fallback
        pos += 1
        first = True
        while True:
            while True:  # the next item (or the closing bracket) with a character after it in the buffer
                p = skip(buf, pos)
                if p < len(buf) or eof:
                    break
                more()
            if p >= len(buf):
                raise _Fallback  # the file ends inside the list
            if buf[p] == "]" and first:
                pos = p + 1
                break
            if p > _CHUNK:  # drop what was read (its lines counted) so the buffer stays small
                at_line += buf.count("\n", at, p)
                buf, at, p = buf[p:], 0, 0
            while True:
                try:
                    if keyed:
                        reader = _Reader(buf, file, 1)
                        reader.at, reader.at_line = at, at_line
                        line = reader.line(p)
                        value, end = reader.value(p)
                        new_at, new_line = reader.at, reader.at_line
                    else:
                        line = at_line + buf.count("\n", at, p)
                        value, end = _SCAN(buf, p)
                        new_at, new_line = p, line
                    q = skip(buf, end)
                    complete = q < len(buf)
                except (ConfigError, _Duplicate):  # a duplicate key: worded by the whole-file reader
                    raise _Fallback from None
                except RecursionError:
                    raise _Fallback from None
                except Exception:  # noqa: BLE001 - cut off by the buffer's end (or invalid: decided at the end)
                    complete = False
                if complete:
                    break
                if eof:
                    raise _Fallback
                more()
            exact = exact_reader(buf, p, at, at_line)
            at, at_line = new_at, new_line
            if not keyed and type(value) is dict:
                item = _tag(LDict(value), file, line)
                item.key_lines = dict.fromkeys(value, line)
                value = item
            if buf.count("[", p, end) + buf.count("{", p, end) >= MAX_DEPTH:
                from evalrun.config.limits import json_depth

                if json_depth(value) + 1 > MAX_DEPTH:
                    raise _Fallback
            yield value, line, exact
            first = False
            if buf[q] == ",":
                pos = q + 1
                nxt = skip(buf, pos)
                if nxt < len(buf) and buf[nxt] == "]":
                    raise _Fallback  # a trailing comma
                continue
            if buf[q] != "]":
                raise _Fallback
            pos = q + 1
            break
        rest = buf[pos:]
        while True:  # only white space may follow the list
            if rest.strip(" \t\r\n"):
                raise _Fallback
            rest = f.read(_CHUNK)
            if not rest:
                return
    except (UnicodeError, json.JSONDecodeError):
        raise _Fallback from None
