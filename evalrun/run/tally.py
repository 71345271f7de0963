"""Running totals and compact per-case rows (enough for the table, the summary and ordered re-reads).

A full result is written to the results file and dropped; only a `Row` (a few short strings and ints) stays
in memory per case, so 10,000 cases cost a few megabytes.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

CELL_MAX = 160
_TOKEN_KEYS = ("prompt", "completion", "total", "cached")


def shorten(text: str, limit: int = CELL_MAX) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def vars_label(vars: dict[str, Any], limit: int = 80) -> str:
    parts = [f"{k}={v if isinstance(v, str) else json.dumps(v, default=str)}" for k, v in vars.items()]
    return shorten(", ".join(parts), limit)


def cell_text(rec: dict[str, Any]) -> str:
    status = rec.get("status")
    if status == "pass":
        return "[PASS] " + shorten(str(rec.get("output") or ""))
    if status == "fail":
        return "[FAIL] " + shorten(str(rec.get("reason") or ""))
    return "[ERROR] " + shorten(str(rec.get("error") or rec.get("reason") or ""))


@dataclass(slots=True)
class Row:
    index: int
    id: str
    status: str
    row_key: str
    column: str
    cell: str
    offset: int


@dataclass
class Tally:
    """Totals of a run (new and resumed cases) plus one Row per case."""

    rows: list[Row] = field(default_factory=list)
    row_labels: dict[str, str] = field(default_factory=dict)
    passed: int = 0
    failed: int = 0
    errors: int = 0
    cached: int = 0
    resumed: int = 0
    provider_tokens: dict[str, int] = field(default_factory=lambda: dict.fromkeys(_TOKEN_KEYS, 0))
    grader_tokens: dict[str, int] = field(default_factory=lambda: dict.fromkeys(_TOKEN_KEYS, 0))
    provider_cost: float = 0.0
    provider_cost_known: bool = False
    grader_cost: float = 0.0
    started: float = field(default_factory=time.time)
    finished: float | None = None
    interrupted: bool = False
    graders: list[str] = field(default_factory=list)
    _columns: dict[tuple[Any, Any], str] = field(default_factory=dict, repr=False)

    def add(self, rec: dict[str, Any], offset: int, *, resumed: bool = False) -> None:
        status = rec.get("status")
        if status == "pass":
            self.passed += 1
        elif status == "fail":
            self.failed += 1
        else:
            status = "error"
            self.errors += 1
        self.resumed += resumed
        self.cached += bool(rec.get("cached"))
        tok = rec.get("tokens")
        if tok and (tok.get("total") or tok.get("prompt") or tok.get("completion")):
            for k in _TOKEN_KEYS:
                self.provider_tokens[k] += int(tok.get(k) or 0)
        cost = rec.get("cost")
        if isinstance(cost, (int, float)):
            self.provider_cost += cost
            self.provider_cost_known = True
        for a in rec.get("assertions") or ():
            if a.get("cost"):
                self.grader_cost += a["cost"]
            atok = a.get("tokens")
            if atok and atok.get("total"):
                for k in _TOKEN_KEYS:
                    self.grader_tokens[k] += int(atok.get(k) or 0)
        vars = rec.get("vars") or {}
        row_key = f"{rec.get('test_index', 0)}:{rec.get('repeat', 0)}:{_vars_key(vars)}"
        if row_key not in self.row_labels:
            desc = rec.get("description")
            self.row_labels[row_key] = shorten(str(desc), 40) + (" | " if vars else "") + vars_label(vars) \
                if desc else vars_label(vars)
        col_key = (rec.get("provider"), rec.get("prompt_label"))
        column = self._columns.get(col_key)
        if column is None:
            column = self._columns[col_key] = f"[{col_key[0]}] {col_key[1] or ''}".rstrip()
        self.rows.append(Row(int(rec.get("index", 0)), str(rec["id"]), status, row_key, column,
                             cell_text(rec), offset))

    @property
    def total(self) -> int:
        return self.passed + self.failed + self.errors

    def summary(self) -> dict[str, Any]:
        end = self.finished or time.time()
        total = self.total
        return {
            "passed": self.passed, "failed": self.failed, "errors": self.errors, "total": total,
            "pass_rate": round(100.0 * self.passed / total, 2) if total else None,
            "duration_s": round(end - self.started, 3),
            "started_at": _iso(self.started), "finished_at": _iso(end),
            "interrupted": self.interrupted, "resumed": self.resumed, "cached": self.cached,
            "tokens": {"provider": dict(self.provider_tokens), "grader": dict(self.grader_tokens)},
            "cost": {"provider": round(self.provider_cost, 6) if self.provider_cost_known else None,
                     "grader": round(self.grader_cost, 6),
                     "total": round(self.provider_cost + self.grader_cost, 6)},
            "graders": list(self.graders),
        }

    def ordered(self) -> list[Row]:
        self.rows.sort(key=lambda r: r.index)
        return self.rows


def _vars_key(vars: dict[str, Any]) -> str:
    if not vars:
        return ""
    text = repr(vars)  # cheap; key order is the config's, the same for every case of a combination
    return text if len(text) <= 64 else str(hash(text))


def _iso(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))
