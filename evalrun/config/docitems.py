"""The items of a large YAML / JSON list file, one at a time (for config/docstream.py).

    yaml_items(f, file) -> Iterator[(item, line, None)]
    json_items(f, file, keyed) -> Iterator[(item, line, exact)]
    Fallback                   raised where only the whole-file reader can decide (docstream then reads whole)

YAML items are built from libyaml's parser events (as yamlevents.py builds whole documents): LDict / LList with
the lines, the YAML 1.2 core scalars and the key rules of the whole-file reader. Anchors are kept for the whole
pass, so an alias may name an anchor of an earlier item. JSON items are read from a sliding buffer by the
jsonlines reader, every mapping, key and list item with its line.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import yaml

from evalrun.config.limits import MAX_ALIAS_VALUES, MAX_DEPTH
from evalrun.config.yamlsrc import _KNOWN, _STR, LDict, LList, _core_scalar, _Loader, _tag
from evalrun.errors import ConfigError

CHUNK = 1 << 16  # characters read at a time (JSON) / handed to libyaml (YAML reads its own)


class Fallback(Exception):
    """The stream cannot go on exactly as the whole-file reader would: read the file whole."""


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
        raise Fallback
    try:
        return _core_scalar(tag, value), tag
    except ValueError:
        raise Fallback from None


def yaml_items(f: Any, file: str) -> Iterator[tuple[Any, int, None]]:
    """(item, line) for each item of the top-level list; Fallback where the whole-file reader must decide."""
    loader = _Loader(f)
    try:
        get = loader.get_event
        get()  # StreamStart
        if not isinstance(get(), yaml.DocumentStartEvent):
            raise Fallback
        ev = get()
        if not isinstance(ev, yaml.SequenceStartEvent) or ev.tag not in (None, "!") or ev.anchor is not None:
            raise Fallback
        builder = _ItemBuilder(loader, file)
        while True:
            ev = get()
            if type(ev) is yaml.SequenceEndEvent:
                break
            yield (*builder.item(ev), None)
        if not isinstance(get(), yaml.DocumentEndEvent) or not isinstance(get(), yaml.StreamEndEvent):
            raise Fallback  # a second document: an error worded by the whole-file reader
    except (yaml.YAMLError, UnicodeError, ValueError, RecursionError):
        raise Fallback from None
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
        nokey = Fallback
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
                    raise Fallback
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
                    raise Fallback
                value, size, line = found
                if size:
                    self.spent += size
                    if self.spent > MAX_ALIAS_VALUES:
                        raise Fallback
                else:
                    size = 1
                if stack and type(stack[-1][0]) is LDict and stack[-1][1] is nokey:
                    raise Fallback  # an alias as a key
            else:  # pragma: no cover - libyaml sends no other event inside a list
                raise Fallback
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
                    raise Fallback
                written = value if isinstance(value, str) else "null" if value is None else str(value)
                lines = container.key_lines
                if written in lines:
                    raise Fallback  # a duplicate key: worded by the whole-file reader
                lines[written] = line
                top[1] = value if tag == _STR else str(value)
            else:
                container[top[1]] = value
                top[1] = nokey
                top[2] += 1 + size
            ev = get()


# ---- JSON: one item at a time from a sliding buffer ------------------------------------------------------------

def json_items(f: Any, file: str, keyed: bool) -> Iterator[tuple[Any, int, Any]]:
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
        buf = f.read(CHUNK)
        eof = not buf

        def more() -> None:
            nonlocal buf, eof
            got = f.read(max(CHUNK, len(buf)))  # doubling: an item larger than a chunk costs linear time
            eof = not got
            buf += got

        at, at_line = 0, 1  # a position in buf and its line: lines are counted on from there
        pos = skip(buf, 0)
        while pos >= len(buf) and not eof:
            more()
            pos = skip(buf, pos)
        if buf[pos:pos + 1] != "[":
            raise Fallback
        pos += 1
        first = True
        while True:
            while True:  # the next item (or the closing bracket) with a character after it in the buffer
                p = skip(buf, pos)
                if p < len(buf) or eof:
                    break
                more()
            if p >= len(buf):
                raise Fallback  # the file ends inside the list
            if buf[p] == "]" and first:
                pos = p + 1
                break
            if p > CHUNK:  # drop what was read (its lines counted) so the buffer stays small
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
                    raise Fallback from None
                except RecursionError:
                    raise Fallback from None
                except Exception:  # noqa: BLE001 - cut off by the buffer's end (or invalid: decided at the end)
                    complete = False
                if complete:
                    break
                if eof:
                    raise Fallback
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
                    raise Fallback
            yield value, line, exact
            first = False
            if buf[q] == ",":
                pos = q + 1
                nxt = skip(buf, pos)
                if nxt < len(buf) and buf[nxt] == "]":
                    raise Fallback  # a trailing comma
                continue
            if buf[q] != "]":
                raise Fallback
            pos = q + 1
            break
        rest = buf[pos:]
        while True:  # only white space may follow the list
            if rest.strip(" \t\r\n"):
                raise Fallback
            rest = f.read(CHUNK)
            if not rest:
                return
    except (UnicodeError, json.JSONDecodeError):
        raise Fallback from None
