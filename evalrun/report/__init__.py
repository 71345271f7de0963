"""Reports of a run: the console text (console.py) and files by extension (.json .jsonl .csv .xml .html), all
read from the same result records, streamed, so formats cannot disagree and memory stays flat."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from evalrun.errors import UsageError

#: Extension -> (module, function) that writes it.
FORMATS = {".json": ("files", "write_json"), ".jsonl": ("files", "write_jsonl"), ".csv": ("files", "write_csv"),
           ".xml": ("files", "write_junit"), ".html": ("html", "write")}


def check_path(path: str) -> None:
    """UsageError unless the extension names a known format (checked before the run starts)."""
    if Path(path).suffix.lower() not in FORMATS:
        raise UsageError(f"unknown output format for {path!r}", key="--output",
                         hint=f"use one of the extensions {', '.join(FORMATS)}")


def write(path: str, outcome: Any) -> None:
    """Write one report file; the format comes from the extension."""
    check_path(path)
    module, function = FORMATS[Path(path).suffix.lower()]
    p = Path(path)
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        getattr(importlib.import_module(f"evalrun.report.{module}"), function)(p, outcome)
    except OSError as e:
        raise UsageError(f"cannot write {path!r}: {e.strerror or e}", key="--output",
                         hint=f"the results are also in {outcome.results_file}") from None
