"""Located data from YAML, JSON and JSONL text (every mapping key and list item knows its FILE:LINE), and reading
config and data files; the layout: docs/design-notes.md, "config/"."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, TextIO

from evalrun.config.readers.jsondoc import parse_json, parse_jsonl
from evalrun.config.readers.located import LDict, bad_byte, check_size
from evalrun.config.readers.yamldoc import parse_yaml
from evalrun.errors import ConfigError, Location


def open_text(path: Path, *, display: str, loc: Location | None = None, key: str | None = None,
              newline: str | None = None) -> TextIO:
    """Open a UTF-8 text file (BOM dropped); missing/unreadable: ConfigError at `loc`."""
    try:
        return open(path, encoding="utf-8-sig", newline=newline)
    except FileNotFoundError:
        raise ConfigError.at(loc, f"file not found: {display}", key=key,
                             hint="paths are relative to the config file's folder") from None
    except IsADirectoryError:
        raise ConfigError.at(loc, f"{display} is a folder, not a file", key=key,
                             hint="use a glob such as dir/*.yaml") from None
    except OSError as e:
        raise ConfigError.at(loc, f"cannot read {display}: {e}", key=key) from None


def read_text(path: Path, *, display: str, loc: Location | None = None, key: str | None = None) -> str:
    """A UTF-8 text file; missing, unreadable or undecodable: ConfigError at `loc`."""
    try:
        with open_text(path, display=display, loc=loc, key=key) as f:
            return f.read()
    except UnicodeDecodeError as e:
        raise bad_byte(e.object, e.start, display) from None
    except OSError as e:
        raise ConfigError.at(loc, f"cannot read {display}: {e}", key=key) from None


def parse_data(text: str, file: str) -> Any:
    """Parse by extension: .json, .jsonl, else YAML."""
    lower = file.lower()
    if lower.endswith(".jsonl"):
        return parse_jsonl(text, file)
    if lower.endswith(".json"):
        return parse_json(text, file)
    return parse_yaml(text, file)


def read_data(path: Path, display: str, *, loc: Location | None = None, key: str | None = None) -> Any:
    """A YAML/JSON/JSONL file's data, located (a YAML/JSON file too large to hold is refused before it is read)."""
    if path.suffix.lower() != ".jsonl" and path.is_file():
        check_size(path.stat().st_size, display)
    return parse_data(read_text(path, display=display, loc=loc, key=key), display)


_DOLLAR_ESCAPE = re.compile(r"\\(?:u0024|x24|U00000024)", re.IGNORECASE)


def load_config_file(path: Path, display: str) -> LDict:
    """Read a config file: must exist, be non-empty, and hold a mapping."""
    if path.is_file():
        check_size(path.stat().st_size, display)
    text = read_text(path, display=display)
    data = parse_data(text, display)
    if data is None:
        raise ConfigError("the config file is empty", file=display, line=1,
                          hint="a config needs at least `prompts`, `providers` and `tests`")
    if not isinstance(data, LDict):
        kind = "list" if isinstance(data, list) else type(data).__name__
        raise ConfigError(f"the config must be a mapping of keys (prompts, providers, tests, ...), not a {kind}",
                          file=display, line=getattr(data, "line", 1) or 1,
                          hint="start the file with keys such as `prompts:`")
    # `$ref` cannot be written without those four characters in a row, an escape of `$` or an escaped line break
    # inside a quoted YAML key: without them, configfile.resolve_refs need not walk the document (0.2 s for 10k tests)
    data.ref_free = "$ref" not in text and _DOLLAR_ESCAPE.search(text) is None and "\\\n" not in text
    return data


__all__ = ["load_config_file", "open_text", "parse_data", "read_data", "read_text"]
