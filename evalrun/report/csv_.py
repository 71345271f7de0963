"""`.csv`: one row per case (vars as JSON, assertion reasons joined), for spreadsheets."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

COLUMNS = ["id", "index", "description", "provider", "prompt_label", "vars", "output", "status", "pass",
           "score", "reason", "error", "latency_ms", "cached", "tokens_total", "cost", "assertions"]


def _assertions(rec: dict[str, Any]) -> str:
    parts = []
    for a in rec.get("assertions") or []:
        mark = "ERROR" if a.get("error") else ("PASS" if a.get("pass") else "FAIL")
        parts.append(f"{a.get('type')}: {mark} {a.get('reason') or ''}".strip())
    return "\n".join(parts)


def write(path: Path, outcome: Any) -> None:
    with open(path, "w", encoding="utf-8", errors="backslashreplace", newline="") as f:
        w = csv.writer(f)
        w.writerow(COLUMNS)
        for rec in outcome.iter_results():
            w.writerow([rec.get("id"), rec.get("index"), rec.get("description") or "", rec.get("provider"),
                        rec.get("prompt_label"), json.dumps(rec.get("vars") or {}, ensure_ascii=False, default=str),
                        rec.get("output") or "", rec.get("status"), rec.get("pass"), rec.get("score"),
                        rec.get("reason") or "", rec.get("error") or "", rec.get("latency_ms"), rec.get("cached"),
                        (rec.get("tokens") or {}).get("total", 0), rec.get("cost"), _assertions(rec)])
