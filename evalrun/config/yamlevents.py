"""Large YAML files read straight from libyaml's parser events: no node tree, equal strings stored once.

    build(text, file) -> value | FALLBACK

`yamlsrc.parse_yaml` composes a node tree (a Python object of ~450 bytes per scalar, all alive at once) and
converts it; a config with 1,000,000 inline values peaked at ~490 MB that way. Here each event becomes its
value as it arrives (LDict / LList with the same lines, the same YAML 1.2 core scalars, the same key rules),
and equal string values share one object, so memory is the data's own. Only plain documents take this path:
aliases share their anchor's value as there (and count against the same alias budget); at an explicit
non-core tag, merge key (`<<`), alias used as a key or inside its own anchor, non-scalar or duplicate key,
extra document, exceeded alias budget or unconvertible scalar it returns FALLBACK and the caller reads the text
the usual way, which then gives exactly the usual values and errors. Syntax errors raise the parser's own
exceptions, as they do there.

Speed (10,000 inline tests, 220,000 events): creating libyaml's event objects is about half the time and is the
floor; the rest is kept small by one function per mapping / list (no generic frame stack), plain scalars resolved
once per distinct text (a miss that no implicit resolver's pattern matches is a str without the resolver loop),
keys' dict keys cached the same way, sizes for the alias budget summed per container, and no line looked up for a
mapping's scalar values (only keys and list items have lines).
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from evalrun.config.limits import MAX_ALIAS_VALUES
from evalrun.config.yamlsrc import _KNOWN, _STR, LDict, LList, _core_scalar, _Loader

#: Returned when the document needs the composing reader (aliases, merge keys, odd tags, errors to word).
FALLBACK = object()
#: Files at least this long are read from events (smaller ones compose faster than they would gain).
MIN_CHARS = 256 * 1024
_STRINGS_MAX = 200_000  # distinct strings remembered for sharing (bounded: a file of unique values)
_MISSING = object()


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
    chunks = _Chunks(text)
    loader = _Loader(chunks)
    try:
        return _build(loader, file)
    except _Fallback:
        return FALLBACK
    finally:
        loader.dispose()
        chunks.text = ""  # not kept alive by anything that outlives the call (an exception's traceback)


def _special_pattern(loader: Any) -> re.Pattern[str]:
    """One pattern matching every plain scalar that some implicit resolver would tag (bool, int, null, ...).

    Each resolver's pattern is anchored and only matches texts starting with a character it is filed under, so
    "no match" here means exactly what `loader.resolve` would find: a str."""
    table = loader.yaml_implicit_resolvers
    found = _SPECIAL.get(id(table))
    if found is None:
        patterns = {regexp.pattern: None for pairs in table.values() for _, regexp in pairs}
        found = _SPECIAL[id(table)] = re.compile("|".join(f"(?:{p})" for p in patterns))
    return found


_SPECIAL: dict[int, re.Pattern[str]] = {}


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
    """The document's value from the loader's events (recursive descent: one function per mapping / list)."""
    get, resolve = loader.get_event, loader.resolve
    get()  # StreamStartEvent
    ev = get()
    if type(ev) is yaml.StreamEndEvent:
        return None
    kinds: tuple[Any, ...] = (
        yaml.ScalarEvent, yaml.MappingStartEvent, yaml.MappingEndEvent, yaml.SequenceStartEvent,
        yaml.SequenceEndEvent, yaml.AliasEvent)
    scalar_ev, map_start, map_end, seq_start, seq_end, alias_ev = kinds  # Any: no narrowing of the events' types
    strings: dict[str, str] = {}  # equal strings stored once
    plain: dict[str, Any] = {}  # untagged plain scalar text -> its value (str, bool, int, None; floats not: NaN)
    keys: dict[str, str] = {}  # untagged plain key text that resolves to a str -> that str
    anchors: dict[str, tuple[Any, int, int]] = {}  # name -> (value, values once expanded (0: scalar), line)
    spent = 0  # values that aliases of lists/mappings added (the composing reader's AliasBudget)
    special = _special_pattern(loader).match

    def other_scalar(ev: Any) -> Any:
        """A tagged, anchored or not yet seen plain scalar's value (anchored: remembered for its aliases)."""
        text = ev.value
        if ev.tag is None and ev.anchor is None and ev.implicit[0]:  # plain, not seen before
            if special(text) is None:  # a str for sure (no implicit resolver could match it)
                value = plain[text] = strings.setdefault(text, text)
                return value
            value, tag = _scalar(ev, resolve)
            if tag == _STR or value == value:  # not NaN: equal values may be shared
                plain[text] = value
            return value
        value, tag = _scalar(ev, resolve)
        if tag == _STR:
            value = strings.setdefault(value, value)
        if ev.anchor is not None:
            anchors[ev.anchor] = (value, 0, ev.start_mark.line + 1)
        return value

    def key_of(ev: Any, lines: dict[str, int]) -> str:
        """A mapping key's dict key; its line is recorded under its written form (duplicates fall back)."""
        if type(ev) is not scalar_ev:  # a list, mapping or alias as a key
            raise _Fallback
        value = other_scalar(ev)
        tag_str = isinstance(value, str)
        written = value if tag_str else "null" if value is None else str(value)
        if written in lines:
            raise _Fallback  # duplicate key: worded by the composing reader
        lines[written] = ev.start_mark.line + 1
        if tag_str and ev.tag is None and ev.implicit[0] and ev.anchor is None:
            keys[ev.value] = value
        return value if tag_str else str(value)

    def alias(ev: Any) -> tuple[Any, int, int]:
        nonlocal spent
        found = anchors.get(ev.anchor)
        if found is None:
            raise _Fallback  # undefined, or inside its own anchor: worded by the composing reader
        value, size, line = found
        if not size:
            return value, 1, line
        spent += size
        if spent > MAX_ALIAS_VALUES:
            raise _Fallback
        return found

    def container(ev: Any) -> tuple[Any, int]:
        if ev.tag is not None and ev.tag != "!":
            raise _Fallback
        anchor = ev.anchor
        if anchor is not None:
            anchors.pop(anchor, None)  # an alias inside its own anchor: worded by the composing reader
        value, size = mapping(ev) if type(ev) is map_start else sequence(ev)
        if anchor is not None:
            anchors[anchor] = (value, size, value.line)
        if len(strings) > _STRINGS_MAX:  # bounded: a file of unique values
            strings.clear()
            plain.clear()
            keys.clear()
        return value, size

    def mapping(start: Any) -> tuple[LDict, int]:
        d = LDict()
        d.file, d.line = file, start.start_mark.line + 1
        lines: dict[str, int] = {}
        d.key_lines = lines
        size = 1
        while True:
            ev = get()
            if type(ev) is scalar_ev and ev.tag is None and ev.anchor is None:
                text = ev.value
                key = keys.get(text) if ev.implicit[0] else strings.setdefault(text, text)
                if key is None:
                    key = key_of(ev, lines)
                elif key in lines:
                    raise _Fallback  # duplicate key: worded by the composing reader
                else:
                    lines[key] = ev.start_mark.line + 1
            elif type(ev) is map_end:
                return d, size
            else:
                key = key_of(ev, lines)
            ev = get()
            cls = type(ev)
            if cls is scalar_ev:
                size += 2
                if ev.tag is None and ev.anchor is None:
                    text = ev.value
                    if ev.implicit[0]:
                        value = plain.get(text, _MISSING)
                        if value is _MISSING:  # not seen yet; most such texts are plain strings
                            if special(text) is None:
                                value = plain[text] = strings.setdefault(text, text)
                            else:
                                value = other_scalar(ev)
                        d[key] = value
                    else:
                        d[key] = strings.setdefault(text, text)
                else:
                    d[key] = other_scalar(ev)
            elif cls is alias_ev:
                d[key], n, _ = alias(ev)
                size += 1 + n
            else:
                d[key], n = container(ev)
                size += 1 + n

    def sequence(start: Any) -> tuple[LList, int]:
        lst = LList()
        lst.file, lst.line = file, start.start_mark.line + 1
        lines: list[int] = []
        lst.item_lines = lines
        append, append_line = lst.append, lines.append
        size = 1
        last = 0
        while True:
            ev = get()
            cls = type(ev)
            if cls is scalar_ev:
                size += 1
                line = ev.start_mark.line + 1
                if line == last:  # the items of a flow list share one int (not one object per item)
                    line = last
                last = line
                append_line(line)
                if ev.tag is None and ev.anchor is None:
                    text = ev.value
                    if ev.implicit[0]:
                        value = plain.get(text, _MISSING)
                        if value is _MISSING:
                            if special(text) is None:
                                value = plain[text] = strings.setdefault(text, text)
                            else:
                                value = other_scalar(ev)
                        append(value)
                    else:
                        append(strings.setdefault(text, text))
                else:
                    append(other_scalar(ev))
            elif cls is seq_end:
                return lst, size
            elif cls is alias_ev:
                value, n, line = alias(ev)
                append(value)
                append_line(line)
                size += n
            else:
                value, n = container(ev)
                append(value)
                append_line(value.line)
                size += n

    try:
        ev = get()  # the document's value
        cls = type(ev)
        if cls is scalar_ev:
            root = other_scalar(ev)
        elif cls is map_start or cls is seq_start:
            root, _ = container(ev)
        else:  # an alias of nothing
            raise _Fallback
        if type(get()) is not yaml.DocumentEndEvent or type(get()) is not yaml.StreamEndEvent:
            raise _Fallback  # a second document: an error worded there
        return root
    finally:  # the functions refer to each other: unbound, they (and the tables above) are freed by refcount now,
        container = mapping = sequence = None  # type: ignore[assignment]  # not kept until a collection
