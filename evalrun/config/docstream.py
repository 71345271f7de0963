"""Large `file://` YAML / JSON test files read as a stream: a top-level list of tests, one item at a time.

    streams(path) -> bool                                 the file is larger than STREAM_MIN_BYTES and its top
                                                          level is a list (one test mapping: read whole)
    StreamedDoc(path, display, base_dir, loc=, key=)      a StreamedTests over the list's items (re-iterable)

The items are read by config/docitems.py. Each item gets the location (file:line, key `[i]`) and the checks
the whole-file path gives it.

Anything the stream does not handle exactly as the whole-file reader would (a syntax error, an explicit tag,
a merge key `<<`, an alias to an unknown anchor or past the alias budget, a duplicate key, nesting past
MAX_DEPTH, text after the list, a decoding error) switches the file to the whole-file path from that item on,
which then gives exactly its values and errors (the items before were already identical). An error in a test is
reported when the stream reaches it, so of several errors in one file the first in file order is reported.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

import yaml

from evalrun.config.docitems import CHUNK, Fallback, json_items, yaml_items
from evalrun.config.teststream import StreamedTests
from evalrun.config.yamlsrc import _Loader
from evalrun.errors import ConfigError, Location

#: Files larger than this many bytes are streamed; smaller ones are read whole, as before.
STREAM_MIN_BYTES = 1 << 20


def _kind(path: Path) -> str:
    return "json" if path.suffix.lower() == ".json" else "yaml"


def streams(path: Path) -> bool:
    """Whether `path` is a large test file holding a top-level list (anything odd: the whole-file path)."""
    try:
        if path.stat().st_size <= STREAM_MIN_BYTES:
            return False
        with open(path, encoding="utf-8-sig") as f:
            if _kind(path) == "json":
                head = f.read(CHUNK).lstrip(" \t\r\n")
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
            items = json_items(f, display, check) if _kind(self.path) == "json" else yaml_items(f, display)
            i = 0
            while True:
                try:
                    item, line, exact = next(items)
                except StopIteration:
                    return
                except Fallback:
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
