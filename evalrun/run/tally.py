"""A run's totals and outcome: each result is written to the results file and dropped; the Tally keeps running
totals and each case's byte offset (8 bytes a case), and reports re-read records by offset.
"""

from __future__ import annotations

import time
from array import array
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalrun import __version__
from evalrun.assertions.engine import DerivedMetric, MetricTotals
from evalrun.run.store import read_at
from evalrun.types import Suite

_TOKEN_KEYS = ("prompt", "completion", "total", "cached")


class Rows:
    """Each case's byte offset in the results file, by case index (8 bytes a case; -1: no case there)."""

    def __init__(self) -> None:
        self._offsets = array("q")

    def put(self, index: int, offset: int) -> None:
        if index >= len(self._offsets):
            grow = max(index + 1 - len(self._offsets), len(self._offsets) // 2, 1024)
            self._offsets.extend(array("q", [-1]) * grow)
        self._offsets[index] = offset

    def __contains__(self, index: int) -> bool:
        return index < len(self._offsets) and self._offsets[index] >= 0

    def __len__(self) -> int:
        return len(self._offsets) - self._offsets.count(-1)

    def __iter__(self) -> Iterator[int]:
        """The offsets in expansion order."""
        return (off for off in self._offsets if off >= 0)

    def present(self) -> bytes:
        """By case index: 1 when the case is in."""
        return bytes(off >= 0 for off in self._offsets)


@dataclass
class Tally:
    """Totals of a run (new and resumed cases) plus each case's offset."""

    rows: Rows = field(default_factory=Rows)
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
    metrics: MetricTotals = field(default_factory=MetricTotals)
    derived: tuple[DerivedMetric, ...] = ()
    #: per graded assertion type: [sum of scores, scored results, passed, lower is better]
    graded: dict[str, list[float]] = field(default_factory=dict)
    #: set after a run with --repeat N > 1: {"repeat", "groups", "flaky_count", "flaky": [...]}
    repeat_summary: dict[str, Any] | None = None

    def add(self, rec: dict[str, Any], offset: int, *, resumed: bool = False) -> None:
        get = rec.get
        status = get("status")
        if status == "pass":
            self.passed += 1
        elif status == "fail":
            self.failed += 1
        else:
            status = "error"
            self.errors += 1
        if resumed:
            self.resumed += 1
        if get("cached"):
            self.cached += 1
        tok = get("tokens")
        if tok and (tok.get("total") or tok.get("prompt") or tok.get("completion")):
            for k in _TOKEN_KEYS:
                self.provider_tokens[k] += int(tok.get(k) or 0)
        cost = get("cost")
        if isinstance(cost, (int, float)):
            self.provider_cost += cost
            self.provider_cost_known = True
        assertions = get("assertions") or ()
        named = False
        for a in assertions:
            if not named and (a.get("metric") or a.get("children")):
                named = True
            if "grader" in a:  # a graded result: its score counts in the type's mean
                score = a.get("score")
                if isinstance(score, (int, float)):
                    g = self.graded.get(a["type"])
                    if g is None:
                        g = self.graded[a["type"]] = [0.0, 0, 0, bool(a.get("lower_is_better"))]
                    g[0] += score
                    g[1] += 1
                    g[2] += bool(a.get("pass"))
            if a.get("cost"):
                self.grader_cost += a["cost"]
            atok = a.get("tokens")
            if atok and atok.get("total"):
                for k in _TOKEN_KEYS:
                    self.grader_tokens[k] += int(atok.get(k) or 0)
        if named:
            self.metrics.add(assertions)
        else:  # no named metric in this case: only the case count moves
            self.metrics.count += 1
        self.rows.put(int(get("index", 0)), offset)

    @property
    def total(self) -> int:
        return self.passed + self.failed + self.errors

    def summary(self) -> dict[str, Any]:
        end = self.finished or time.time()
        total = self.total
        out: dict[str, Any] = {
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
            "metrics": {k: round(v, 6) for k, v in self.metrics.averages().items()},
            "derived_metrics": {k: (round(v, 6) if v is not None and v == v else None)
                                for k, v in self.metrics.derived(self.derived).items()},
        }
        if self.graded:  # each graded type's mean score over the run
            out["graded"] = {name: {"mean": round(total / n, 6), "count": int(n), "passed": int(passed),
                                    **({"lower_is_better": True} if lower else {})}
                             for name, (total, n, passed, lower) in sorted(self.graded.items()) if n}
        if self.repeat_summary is not None:
            out["repeats"] = self.repeat_summary
        return out


def _iso(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


@dataclass(repr=False)
class RunOutcome:
    """A finished (or interrupted) run: the tally in memory, full results in the results file."""

    suite: Suite
    tally: Tally
    results_file: Path
    run_id: str | None = None
    #: per-group statistics over repeats (runs with --repeat N > 1), see evalrun/run/repeats.py
    repeats: Any = None

    def __repr__(self) -> str:
        # Kept short on purpose: asyncio.run reprs the main task, and with it this result, on exit;
        # a dataclass repr would walk the whole suite (over a second for 10,000 tests).
        return f"<RunOutcome {self.tally.total} cases, results in {self.results_file}>"

    @property
    def summary(self) -> dict[str, Any]:
        return self.tally.summary()

    @property
    def interrupted(self) -> bool:
        return self.tally.interrupted

    def rows(self) -> Rows:
        """The cases' offsets in the results file, in expansion order."""
        return self.tally.rows

    def iter_results(self) -> Iterator[dict[str, Any]]:
        """Full result records in expansion order, re-read one at a time from the results file."""
        rows = self.rows()
        if not rows:
            return
        with open(self.results_file, "rb") as f:
            for offset in rows:
                yield read_at(f, offset)

    def meta(self) -> dict[str, Any]:
        return {"evalrun_version": __version__, "description": self.suite.description,
                "config_files": list(self.suite.files), "results_file": str(self.results_file),
                "run_id": self.run_id}
