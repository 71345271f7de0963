"""Tests from CSV rows (readers/csvrows.py): plain columns are vars; promptfoo's `__` columns set assertions,
description, options.

Columns: `__expected`, `__expected1..N` (assertion shorthand), `__description`, `__prefix`, `__suffix`,
`__metric`, `__threshold`, `__metadata:key` (`__metadata:key[]` splits on commas; `\\,` keeps a comma),
`__config:__expected:threshold` / `__config:__expectedN:threshold` (the threshold of the Nth non-empty expected
assertion, as promptfoo numbers them; also copied into metadata). Errors name the CSV's own file and line.
"""

from __future__ import annotations

import re
from typing import Any

from evalrun.config.readers.csvrows import CsvRow
from evalrun.errors import ConfigError
from evalrun.suggest import did_you_mean

_SPECIAL = ("__expected", "__description", "__prefix", "__suffix", "__metric", "__threshold", "__metadata:")
_EXPECTED = re.compile(r"^__expected\d*$")
_CONFIG = re.compile(r"^__config:(__expected(\d*)):(\w+)$")
_CONFIG_KEYS = ("threshold",)
_UNESCAPED_COMMA = re.compile(r"(?<!\\),")


def check_header(header: list[str], display: str) -> None:
    """The `__` columns must be promptfoo's; no column twice."""
    for h in header:
        if h.startswith("__config:"):
            _check_config_column(h, display)
        elif h.startswith("__") and not (_EXPECTED.match(h) or h in _SPECIAL or h.startswith("__metadata:")):
            raise ConfigError(f"unknown special column {h!r}", file=display, line=1,
                              hint=did_you_mean(h, _SPECIAL) or f"allowed: {', '.join(_SPECIAL)}")
    dupes = {h for h in header if header.count(h) > 1}
    if dupes:
        raise ConfigError(f"duplicate column {sorted(dupes)[0]!r}", file=display, line=1)


def _check_config_column(h: str, display: str) -> None:
    m = _CONFIG.match(h)
    if m is None or (m.group(2) and int(m.group(2)) < 1):
        raise ConfigError(f"bad __config column {h!r}", file=display, line=1,
                          hint="write __config:__expected:threshold or __config:__expectedN:threshold (N >= 1)")
    if m.group(3) not in _CONFIG_KEYS:
        raise ConfigError(f"unknown config key {m.group(3)!r} in column {h!r}", file=display, line=1,
                          hint=f"allowed: {', '.join(_CONFIG_KEYS)}")


def _config_target(col: str) -> int:
    """`__config:__expected:threshold` -> 0, `__config:__expected3:threshold` -> 2 (promptfoo's numbering)."""
    m = _CONFIG.match(col)
    assert m is not None  # checked with the header
    return int(m.group(2)) - 1 if m.group(2) else 0


def row_to_test(row: CsvRow, display: str, type_names: tuple[str, ...]) -> dict[str, Any]:
    """A CSV row -> a test mapping (vars, assert, description, options, threshold, metadata)."""
    from evalrun.config.shorthand import from_shorthand

    test: dict[str, Any] = {"vars": {}}
    asserts: list[dict[str, Any]] = []
    metric = row.cells.get("__metric") or None
    configs: dict[int, dict[str, float]] = {}
    for col, cell in row.cells.items():
        if not col.startswith("__"):
            test["vars"][col] = cell
        elif _EXPECTED.match(col):
            if cell.strip():
                asserts.append(from_shorthand(cell, type_names, file=display, line=row.line, key=col))
        elif col == "__description" and cell:
            test["description"] = cell
        elif col in ("__prefix", "__suffix") and cell:
            test.setdefault("options", {})[col[2:]] = cell
        elif col == "__threshold" and cell.strip():
            try:
                test["threshold"] = float(cell)
            except ValueError:
                raise ConfigError(f"__threshold must be a number, got {cell!r}", file=display, line=row.line,
                                  key="__threshold") from None
        elif col.startswith("__config:"):
            try:
                value = float(cell)
            except ValueError:
                raise ConfigError(f"{col} must be a number, got {cell!r}", file=display, line=row.line,
                                  key=col) from None
            configs.setdefault(_config_target(col), {})[col.rsplit(":", 1)[1]] = value
        elif col.startswith("__metadata:") and cell.strip():
            name = col[len("__metadata:"):]
            if name.endswith("[]"):
                test.setdefault("metadata", {})[name[:-2]] = [v.strip().replace("\\,", ",")
                                                              for v in _UNESCAPED_COMMA.split(cell)]
            else:
                test.setdefault("metadata", {})[name] = cell
    for i, a in enumerate(asserts):
        if metric:
            a["metric"] = metric
        for k, v in configs.get(i, {}).items():
            a[k] = v
            test.setdefault("metadata", {})[k] = v
    if asserts:
        test["assert"] = asserts
    return test
