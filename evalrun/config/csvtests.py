"""Tests from a CSV file, row by row: plain columns are vars, promptfoo's `__` columns (`__expected[N]` in its
shorthand, `__description`, `__metadata:key`, `__config:__expected[N]:threshold`, ...) set the rest
(docs/config.md); errors name the CSV's line. The delimiter is PROMPTFOO_CSV_DELIMITER, default `,`."""

from __future__ import annotations

import csv
import os
import re
from collections.abc import Iterable, Iterator
from functools import lru_cache
from typing import Any, NamedTuple

from evalrun import pkgref
from evalrun.config import files
from evalrun.config.readers.located import not_utf8
from evalrun.errors import ConfigError, did_you_mean


class CsvRow(NamedTuple):
    """One data row: its line in the CSV file and the cells by column name."""

    line: int
    cells: dict[str, str]


def iter_rows(f: Iterable[str], display: str) -> Iterator[CsvRow]:
    """The data rows of an open CSV file (its header checked first), one at a time."""
    reader = csv.reader(f, delimiter=os.environ.get("PROMPTFOO_CSV_DELIMITER", ","), strict=True)
    try:
        header = next(reader, None)
        if header is None:
            raise ConfigError("the CSV file is empty", file=display, line=1,
                              hint="the first row names the columns (vars and __expected ...)")
        header = [h.strip() for h in header]
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
    except UnicodeDecodeError:
        raise not_utf8(getattr(f, "name", None), display) from None


_SPECIAL = ("__expected", "__description", "__prefix", "__suffix", "__metric", "__threshold", "__metadata:")
_EXPECTED = re.compile(r"^__expected\d*$")
_CONFIG = re.compile(r"^__config:(__expected(\d*)):(\w+)$")
_CONFIG_KEYS = ("threshold",)
_UNESCAPED_COMMA = re.compile(r"(?<!\\),")


def check_header(header: list[str], display: str) -> None:
    """Every column named, the `__` columns promptfoo's, no column twice."""
    for i, h in enumerate(header):
        if not h:
            raise ConfigError(f"column {i + 1} has no name", file=display, line=1,
                              hint="every column needs a header (a var name or __expected ...)")
        if h.startswith("__config:"):
            m = _CONFIG.match(h)
            if m is None or (m.group(2) and int(m.group(2)) < 1):
                raise ConfigError(f"bad __config column {h!r}", file=display, line=1, hint="write "
                                  "__config:__expected:threshold or __config:__expectedN:threshold (N >= 1)")
            if m.group(3) not in _CONFIG_KEYS:
                raise ConfigError(f"unknown config key {m.group(3)!r} in column {h!r}", file=display, line=1,
                                  hint=f"allowed: {', '.join(_CONFIG_KEYS)}")
        elif h.startswith("__") and not (_EXPECTED.match(h) or h in _SPECIAL or h.startswith("__metadata:")):
            raise ConfigError(f"unknown special column {h!r}", file=display, line=1,
                              hint=did_you_mean(h, _SPECIAL) or f"allowed: {', '.join(_SPECIAL)}")
    dupes = {h for h in header if header.count(h) > 1}
    if dupes:
        raise ConfigError(f"duplicate column {sorted(dupes)[0]!r}", file=display, line=1)


def row_to_test(row: CsvRow, display: str, type_names: tuple[str, ...]) -> dict[str, Any]:
    """A CSV row -> a test mapping (vars, assert, description, options, threshold, metadata)."""
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
            m = _CONFIG.match(col)
            assert m is not None  # checked with the header; `__expected3` is the third assertion (promptfoo)
            configs.setdefault(int(m.group(2)) - 1 if m.group(2) else 0, {})[m.group(3)] = value
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


_LIST_TYPES = frozenset({"contains-all", "contains-any", "icontains-all", "icontains-any"})
_RAW_VALUE_TYPES = frozenset({"contains-json", "is-json", "is-xml", "contains-xml", "is-sql", "contains-sql"})


@lru_cache(maxsize=8)
def _shorthand_regex(names: tuple[str, ...]) -> re.Pattern[str]:
    alts = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    return re.compile(rf"^(not-)?({alts})(?:\((\d+(?:\.\d+)?)\))?(?::([\s\S]*))?$")


#: promptfoo assertion types that evalrun does not have (a CSV `__expected` prefix naming one is an error, not
#: a silent `equals`), with what to use instead where there is something.
PROMPTFOO_ONLY_TYPES: dict[str, str] = {
    "search-rubric": "use `llm-rubric`",
    "max-score": "", "classifier": "", "moderation": "", "perplexity": "",
    "perplexity-score": "", "guardrails": "", "webhook": "", "ruby": "", "gleu": "", "meteor": "",
    "is-valid-function-call": "use `is-valid-openai-tools-call`",
    "conversation-relevance": "", "tool-call-f1": "", "trace-span-count": "", "trace-span-duration": "",
    "trace-error-spans": "",
}
#: `__expected` prefixes that name the type of the code or rubric after them.
_CODE_PREFIXES = {"javascript:": "javascript", "fn:": "javascript", "eval:": "javascript", "grade:": "llm-rubric",
                  "llm-rubric:": "llm-rubric", "python:": "python"}
_TYPE_LIKE = re.compile(r"^(not-)?([a-z][a-z0-9]*(?:-[a-z0-9]+)*)(\(\d+(?:\.\d+)?\))?:")


def _unsupported_prefix(s: str, type_names: tuple[str, ...], *, file: str | None, line: int,
                        key: str | None) -> None:
    """Raise for `word:` / `word(N):` naming a promptfoo type evalrun lacks, or `word(N):` misspelling one of ours;
    anything else (`Time: 10:30`, `Paris: the capital`) is left to mean `equals`."""
    m = _TYPE_LIKE.match(s)
    if not m:
        return
    negate, word, thr = m.group(1) or "", m.group(2), m.group(3)
    if word in PROMPTFOO_ONLY_TYPES:
        raise ConfigError(f"__expected {s[:60]!r}: {negate}{word} is a promptfoo assertion type that evalrun "
                          "does not support", file=file, line=line, key=key,
                          hint=PROMPTFOO_ONLY_TYPES[word] or "run `evalrun list` to see every assertion type")
    if thr and type_names:
        hint = did_you_mean(word, type_names)
        if hint:
            raise ConfigError(f"__expected {s[:60]!r}: unknown assertion type {negate + word!r}", file=file,
                              line=line, key=key, hint=hint)


def from_shorthand(expected: str, type_names: tuple[str, ...], *, file: str | None = None, line: int = 0,
                   key: str | None = None) -> dict[str, Any]:
    """promptfoo's `__expected` shorthand -> an assertion mapping (docs/config.md)."""
    s = expected
    for prefix, type_ in _CODE_PREFIXES.items():
        if s.startswith(prefix):
            return {"type": type_, "value": s[len(prefix):].strip()}
    path = pkgref.split_ref(s)[0] if files.is_ref(s) else ""
    if path.endswith(".py"):  # as promptfoo: `.py` in lower case only, JavaScript's extensions in any case
        return {"type": "python", "value": s}
    if files.is_code(path) and not path.lower().endswith(".py"):
        return {"type": "javascript", "value": s}
    m = _shorthand_regex(type_names).match(s) if type_names else None
    if not m:
        _unsupported_prefix(s, type_names, file=file, line=line, key=key)
        return {"type": "equals", "value": s}
    negate, type_, thr, value = m.groups()
    out: dict[str, Any] = {"type": f"{negate or ''}{type_}"}
    if value is not None:
        if type_ in _LIST_TYPES:
            out["value"] = [v.strip() for v in value.split(",")]
        elif type_ in _RAW_VALUE_TYPES:
            out["value"] = value
        else:
            out["value"] = value.strip()
    if thr is not None:
        out["threshold"] = float(thr)
    return out
