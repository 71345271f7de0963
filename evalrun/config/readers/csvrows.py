"""CSV rows with their lines: a header row names the columns; each data row is a CsvRow (line, cells by name).

The delimiter is `,` unless PROMPTFOO_CSV_DELIMITER says otherwise (as in promptfoo). An empty file, a header
cell without a name, a row with the wrong number of cells, bad quoting or undecodable text is a ConfigError at
its line.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Callable, Iterable, Iterator

from evalrun.errors import ConfigError


class CsvRow:
    """One data row: its line in the CSV file and the cells by column name."""

    __slots__ = ("line", "cells")

    def __init__(self, line: int, cells: dict[str, str]) -> None:
        self.line = line
        self.cells = cells


def iter_rows(f: Iterable[str], display: str,
              check_header: Callable[[list[str], str], None] | None = None) -> Iterator[CsvRow]:
    """The data rows of an open CSV file (header checked first), one at a time, each with its line."""
    delimiter = os.environ.get("PROMPTFOO_CSV_DELIMITER", ",")
    reader = csv.reader(f, delimiter=delimiter, strict=True)
    try:
        header = next(reader, None)
        if header is None:
            raise ConfigError("the CSV file is empty", file=display, line=1,
                              hint="the first row names the columns (vars and __expected ...)")
        header = [h.strip() for h in header]
        for i, h in enumerate(header):
            if not h:
                raise ConfigError(f"column {i + 1} has no name", file=display, line=1,
                                  hint="every column needs a header (a var name or __expected ...)")
        if check_header is not None:
            check_header(header, display)
        width = len(header)
        start = reader.line_num + 1
        for record in reader:
            line, start = start, reader.line_num + 1
            if not record or all(not c.strip() for c in record) and len(record) <= 1:
                continue
            if len(record) != width:
                raise ConfigError(f"this row has {len(record)} cells but the header has {width} columns",
                                  file=display, line=line,
                                  hint="quote cells that contain the delimiter (\"a, b\") or fix the row")
            yield CsvRow(line, dict(zip(header, record, strict=True)))
    except csv.Error as e:
        raise ConfigError(f"malformed CSV: {e}", file=display, line=reader.line_num,
                          hint="check the quotes on this line") from None
    except UnicodeDecodeError:  # a file read as a stream: its decoder failed a buffer ahead of the bad byte
        from evalrun.config.readers.encoding import not_utf8

        raise not_utf8(getattr(f, "name", None), display) from None
