"""Large YAML files read straight from libyaml's parser events: no node tree, equal strings stored once.

    build(text, file) -> value | FALLBACK

`yamlsrc.parse_yaml` composes a node tree (a Python object of ~450 bytes per scalar, all alive at once) and
converts it; a config with 1,000,000 inline values peaked at ~490 MB that way. Here each event becomes its
value as it arrives (LDict / LList with the same lines, the same YAML 1.2 core scalars, the same key rules),
and equal string values share one object, so memory is the data's own. Only plain documents take this path:
aliases share their anchor's value as there (and count against the same alias budget); at an explicit
non-core tag, merge key (`<<`), alias used as a key or inside its own anchor, non-scalar or duplicate key,
extra document, exceeded alias budget or unconvertible scalar it returns FALLBACK and the caller reads the text the usual way, which then gives exactly
the usual values and errors. Syntax errors raise the parser's own exceptions, as they do there.
"""

from __future__ import annotations

from typing import Any

import yaml

from evalrun.config.limits import MAX_ALIAS_VALUES
from evalrun.config.yamlsrc import _KNOWN, _STR, LDict, LList, _core_scalar, _Loader, _tag

#: Returned when the document needs the composing reader (aliases, merge keys, odd tags, errors to word).
FALLBACK = object()
#: Files at least this long are read from events (smaller ones compose faster than they would gain).
MIN_CHARS = 256 * 1024
_STRINGS_MAX = 200_000  # distinct strings remembered for sharing (bounded: a file of unique values)


class _Fallback(Exception):
    pass


class _Chunks:
    """The text handed to libyaml a chunk at a time (given the whole str, it keeps a UTF-8 copy of it all)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def read(self, size: int = -1) -> str:
        start = self.pos
        self.pos = len(self.text) if size < 0 else min(len(self.text), start + size)
        return self.text[start:self.pos]


def build(text: str, file: str) -> Any:
    loader = _Loader(_Chunks(text))
    try:
        return _build(loader, file)
    except _Fallback:
        return FALLBACK
    finally:
        loader.dispose()


def _scalar(ev: Any, resolve: Any) -> tuple[Any, str]:
    tag = ev.tag
    if tag is None or tag == "!":
        tag = resolve(yaml.ScalarNode, ev.value, ev.implicit)
    if tag == _STR:
        return ev.value, tag
    if tag not in _KNOWN:  # merge keys, timestamps, binary, custom tags
        raise _Fallback
    try:
        return _core_scalar(tag, ev.value), tag
    except ValueError:
        raise _Fallback from None


def _build(loader: Any, file: str) -> Any:
    get, resolve = loader.get_event, loader.resolve
    get()  # StreamStartEvent
    ev = get()
    if isinstance(ev, yaml.StreamEndEvent):
        return None
    strings: dict[str, str] = {}
    anchors: dict[str, tuple[Any, int, int]] = {}  # name -> (value, values once expanded, line of the anchor)
    last_line = 0
    spent = 0  # values that aliases of lists/mappings added (the composing reader's AliasBudget)
    nokey = FALLBACK
    # a frame: [LDict or LList, pending key (nokey: the next scalar is a key), values once expanded, anchor]
    stack: list[list[Any]] = []
    root: Any = None
    while True:
        ev = get()
        cls = type(ev)
        tag = None
        if cls is yaml.ScalarEvent:
            value, tag = _scalar(ev, resolve)
            if tag == _STR:
                shared = strings.get(value)
                if shared is None:
                    if len(strings) >= _STRINGS_MAX:
                        strings.clear()
                    strings[value] = value
                else:
                    value = shared
            line, size = ev.start_mark.line + 1, 1
            if line == last_line:  # the items of a flow list share one int (not one object per item)
                line = last_line
            last_line = line
            if ev.anchor is not None:
                anchors[ev.anchor] = (value, 0, line)  # 0: a scalar (its aliases cost nothing)
        elif cls is yaml.MappingStartEvent or cls is yaml.SequenceStartEvent:
            if ev.tag not in (None, "!"):
                raise _Fallback
            new: Any
            if cls is yaml.MappingStartEvent:
                new = LDict()
                new.key_lines = {}
            else:
                new = LList()
                new.item_lines = []
            _tag(new, file, ev.start_mark.line + 1)
            if ev.anchor is not None:
                anchors.pop(ev.anchor, None)  # an alias inside its own anchor: worded by the composing reader
            stack.append([new, nokey, 1, ev.anchor])
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
                spent += size
                if spent > MAX_ALIAS_VALUES:
                    raise _Fallback
            else:
                size = 1
            if stack and type(stack[-1][0]) is LDict and stack[-1][1] is nokey:
                raise _Fallback  # an alias as a key
        elif cls is yaml.DocumentEndEvent:
            break
        else:  # pragma: no cover - libyaml sends no other event inside a document
            raise _Fallback
        if not stack:
            root = value
            continue
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
                raise _Fallback  # duplicate key: worded by the composing reader
            lines[written] = line
            top[1] = value if tag == _STR else str(value)
        else:
            container[top[1]] = value
            top[1] = nokey
            top[2] += 1 + size
    if not isinstance(get(), yaml.StreamEndEvent):  # a second document: an error worded there
        raise _Fallback
    return root
