"""Test files read as a stream: JSONL and CSV tests (one test per line / row), never held whole in memory.

    StreamedTests(path, display, ctx, loc=, key=)   re-iterable: each pass reads the file again, row by row,
                                                     and yields one TestPart per row (assertions built through
                                                     the shared handler cache in asserts.py)
    .specs(start, default, lo=, hi=)                 TestSpecs of the rows numbered lo..hi-1 only (a worker's
                                                     window of the run, run/workers.py)

Every row is checked (schema, assertions) the first time through, with the row's own line in errors; later
passes (expansion, counting) skip the schema check but still build each row's specs (config/rowspec.py: a row
repeating the previous row's assertions reuses their specs), so a suite of any number of rows runs in flat
memory. A JSONL row is one JSON object on one line (blank lines are skipped); a CSV file has a
header row (see csvtests.py).
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

from evalrun.errors import ConfigError, Location

STREAMED_SUFFIXES = (".jsonl", ".csv")


class StreamedTests:
    """The tests of one JSONL or CSV file, produced on demand."""

    def __init__(self, path: Path, display: str, base_dir: str, *, loc: Location | None, key: str) -> None:
        self.path = path
        self.display = display
        self.base_dir = base_dir
        self.loc = loc  # where the file was referenced (for "file not found" and the like)
        self.key = key
        self.checked = False  # True after one complete, error-free pass
        self.rows: int | None = None  # the number of rows, once a pass has read them all

    def __repr__(self) -> str:
        return f"<StreamedTests {self.display}>"

    def __iter__(self) -> Iterator[Any]:
        """The rows as TestParts (not merged with defaultTest)."""
        from evalrun.config.schema import validate
        from evalrun.config.testcases import Ctx, part_from_node

        ctx, check = Ctx(self.base_dir), not self.checked
        for row, loc, key in self._rows():
            if check:
                validate(row, file=self.display, definition="test", prefix=key, line=loc.line)
            yield part_from_node(row, ctx, loc=loc, key=key)

    def specs(self, start: int, default: Any, *, lo: int = 0, hi: int | None = None) -> Generator[Any, None, int]:
        """The rows as TestSpecs numbered from `start`, `default` (defaultTest's TestPart or None) merged; only
        those numbered lo..hi-1 (in a file read whole before, the rows ahead of `lo` are skipped unparsed and a
        file outside the window is not opened). Returns the number after this file's last row."""
        from evalrun.config.rowspec import RowSpecs

        n = self.rows
        if n is not None and (start + n <= lo or (hi is not None and start >= hi)):
            return start + n
        skip = max(0, lo - start) if n is not None else 0
        build, check = RowSpecs(self.base_dir, default).spec, not self.checked
        i = start + skip
        rows = self._rows(skip)
        try:
            for row, loc, key in rows:
                if hi is not None and i >= hi:
                    break
                if i >= lo:
                    yield build(row, i, loc, key, check=check)
                i += 1
        finally:
            rows.close()
        return i if n is None else start + n

    def _rows(self, skip: int = 0) -> Generator[tuple[dict[str, Any], Location, str], None, None]:
        """(row, its location, its key path) after the first `skip` rows (passed over unparsed); a pass that
        reads the file to the end marks it checked (callers schema-check the rows of the first pass) and
        counted."""
        read = self._csv(skip) if self.path.suffix.lower() == ".csv" else self._jsonl(skip)
        count = skip
        for item in read:
            yield item
            count += 1
        self.checked, self.rows = True, count

    def _open(self) -> Any:
        try:
            return open(self.path, encoding="utf-8-sig", newline="")  # noqa: SIM115 - closed by the caller
        except FileNotFoundError:
            raise ConfigError.at(self.loc, f"file not found: {self.display}", key=self.key,
                                 hint="paths are relative to the config file's folder") from None
        except IsADirectoryError:
            raise ConfigError.at(self.loc, f"{self.display} is a folder, not a file", key=self.key,
                                 hint="use a glob such as dir/*.jsonl") from None
        except OSError as e:
            raise ConfigError.at(self.loc, f"cannot read {self.display}: {e}", key=self.key) from None

    def _jsonl(self, skip: int = 0) -> Iterator[tuple[dict[str, Any], Location, str]]:
        import json

        from evalrun.config.limits import MAX_DEPTH, json_depth, may_exceed
        from evalrun.jsonfast import loads

        display = self.display
        with self._open() as f:
            i = 0
            n = 0
            try:
                for n, line in enumerate(f, 1):  # noqa: B007 - n is read after the loop on a decode error
                    if line[0] != "{" and not line.strip():  # a row starts with its "{"
                        continue
                    if skip:  # a row before the window of a file read whole before: not parsed
                        skip -= 1
                        i += 1
                        continue
                    try:
                        item = loads(line)
                        # nesting deeper than MAX_DEPTH needs more than MAX_DEPTH opening brackets (counting
                        # them is C speed; the exact checks run only on lines that have that many)
                        too_deep = (line.count("[") + line.count("{") > MAX_DEPTH and may_exceed(line)
                                    and json_depth(item) > MAX_DEPTH)
                    except json.JSONDecodeError:
                        e = _decode_error(line)
                        raise ConfigError(f"invalid JSON on this line: {e.msg} (column {e.colno})", file=display,
                                          line=n, hint="JSONL needs one complete JSON object per line") from None
                    except RecursionError:
                        too_deep = True
                    if too_deep:
                        raise ConfigError(f"lists and mappings are nested more than {MAX_DEPTH} levels deep",
                                          file=display, line=n, hint="flatten the data")
                    key = f"[{i}]"
                    loc = Location(display, n)
                    if not isinstance(item, dict):
                        raise ConfigError.at(loc, f"expected a test mapping, got {type(item).__name__}", key=key,
                                             hint="a tests file holds one {vars, assert, ...} object per line")
                    yield item, loc, key
                    i += 1
            except UnicodeDecodeError:
                from evalrun.config.encoding import not_utf8

                raise not_utf8(self.path, display) from None

    def _csv(self, skip: int = 0) -> Iterator[tuple[dict[str, Any], Location, str]]:
        from evalrun.config.csvtests import iter_rows, row_to_test
        from evalrun.config.testcases import type_names

        display = self.display
        names = type_names()
        with self._open() as f:
            for row in iter_rows(f, display):
                if skip:  # a row before the window of a file read whole before: not turned into a test
                    skip -= 1
                    continue
                test = row_to_test(row, display, names)
                yield test, Location(display, row.line), ""


def _decode_error(line: str) -> Any:
    """The JSON error of a bad line, its column counted without the line break."""
    import json

    try:
        json.loads(line.rstrip("\r\n"))
    except json.JSONDecodeError as e:
        return e
    return json.JSONDecodeError("invalid JSON", line, len(line))  # pragma: no cover - loads failed above
