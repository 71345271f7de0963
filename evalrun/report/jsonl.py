"""`.jsonl`: one result record per line, in expansion order (the results contract's `results` items)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def write(path: Path, outcome: Any) -> None:
    with open(path, "w", encoding="utf-8", errors="backslashreplace") as f:
        for rec in outcome.iter_results():
            f.write(json.dumps(rec, ensure_ascii=False, default=str) + "\n")
