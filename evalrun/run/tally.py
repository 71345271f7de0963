"""A run's totals (and each case's byte offset, by which reports re-read records) and outcome, and statistics over
`--repeat N` per group of repeats: pass rate and score intervals, flakiness."""

from __future__ import annotations

import json
import math
import time
from array import array
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalrun import __version__
from evalrun.assertions.engine import DerivedMetric, MetricTotals
from evalrun.run.store import read_at
from evalrun.types import Suite

_TOKEN_KEYS = ("prompt", "completion", "total", "cached")
Z95 = 1.959964
#: Bootstrap resamples of a mean's interval, and the fixed seed that makes the interval a function of the values.
RESAMPLES = 2000
SEED = 25


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
    graders: list[str] = field(default_factory=list)  # as the records name them (a run sets its own at its end)
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
        self.resumed += resumed
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
                if a["grader"] and a["grader"] not in self.graders:
                    self.graders.append(str(a["grader"]))
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
            "started_at": iso_time(self.started), "finished_at": iso_time(end),
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


def iso_time(t: float | None = None) -> str:
    """`2026-11-23T10:15:47Z` (now when `t` is None)."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


@dataclass(repr=False)
class RunOutcome:
    """A finished (or interrupted) run: the tally in memory, full results in the results file."""

    suite: Suite
    tally: Tally
    results_file: Path
    run_id: str | None = None
    #: per-group statistics over repeats (runs with --repeat N > 1)
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
                "run_id": self.run_id, **({"tags": dict(self.suite.tags)} if self.suite.tags else {})}


# ------------------------------------------------------------------ statistics over repeats

def wilson(k: int, n: int, z: float = Z95) -> tuple[float, float]:
    """95% Wilson score interval of a proportion k/n ((0, 1) for n = 0)."""
    if n <= 0:
        return 0.0, 1.0
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def mean_ci(values: list[float]) -> tuple[float, float, float]:
    """Mean and seeded 95% percentile-bootstrap interval: it stays inside the values' [min, max] (a Student-t
    interval on five 0/1 scores reached [-0.08, 1.28])."""
    n = len(values)
    if n == 0:
        return math.nan, math.nan, math.nan
    mean = sum(values) / n
    if n == 1 or min(values) == max(values):
        return mean, mean, mean
    import random  # only for repeated runs with differing scores

    draws = random.Random(SEED).choices(values, k=n * RESAMPLES)
    means = sorted(math.fsum(draws[i:i + n]) / n for i in range(0, n * RESAMPLES, n))
    lo, hi = means[int(0.025 * RESAMPLES)], means[int(0.975 * RESAMPLES) - 1]
    return mean, min(lo, mean), max(hi, mean)


def group_key(rec: dict[str, Any]) -> tuple[Any, ...]:
    """The case's identity without its repeat index."""
    prompt = rec.get("prompt_index")
    return (rec.get("test_index", 0), json.dumps(rec.get("vars") or {}, sort_keys=True, default=str),
            rec.get("provider"), prompt if prompt is not None else rec.get("prompt_label"))


def group_label(rec: dict[str, Any]) -> str:
    """Description or vars, provider and prompt label."""
    desc = rec.get("description")
    vars_ = rec.get("vars") or {}
    what = str(desc) if desc else ", ".join(f"{k}={v}" for k, v in vars_.items())[:80] or \
        f"tests[{rec.get('test_index', 0)}]"
    if desc and vars_:
        what += " [" + ", ".join(f"{k}={v}" for k, v in vars_.items())[:60] + "]"
    prompt = str(rec.get("prompt_label") or "")
    prompt = prompt if len(prompt) <= 40 else prompt[:39] + "…"
    return f"{what} | {rec.get('provider')} | {prompt}"


def score_names(rec: dict[str, Any]) -> list[tuple[str, float | None]]:
    """(name, score) of each assertion: its `metric`, else its type and value as written (`contains "refund"`, as
    promptfoo names a metric by what it checks); a name that repeats in the record gets its position
    (`contains "x" [2]`, as in the key path `assert[2]`) from its second use on."""
    out: list[tuple[str, float | None]] = []
    seen: set[str] = set()
    for i, a in enumerate(rec.get("assertions") or []):
        name = str(a.get("metric") or a.get("type"))
        if not a.get("metric") and isinstance(a.get("value"), str):
            name += f" {json.dumps(a['value'], ensure_ascii=False)}"
        if name in seen:
            name += f" [{i}]"
        seen.add(name)
        out.append((name, a.get("score") if isinstance(a.get("score"), (int, float)) else None))
    return out


def lower_names(rec: dict[str, Any]) -> set[str]:
    """The score names (as `score_names` gives them) of the assertions whose lower score is better."""
    return {name for (name, _), a in zip(score_names(rec), rec.get("assertions") or [], strict=True)
            if a.get("lower_is_better")}


@dataclass
class GroupStats:
    key: tuple[Any, ...]
    label: str
    n: int = 0
    passed: int = 0
    errors: int = 0
    scores: list[float] = field(default_factory=list)
    by_name: dict[str, list[float]] = field(default_factory=dict)

    def add(self, rec: dict[str, Any]) -> None:
        self.n += 1
        status = rec.get("status")
        self.passed += status == "pass"
        self.errors += status not in ("pass", "fail")
        if isinstance(rec.get("score"), (int, float)):
            self.scores.append(float(rec["score"]))
        for name, value in score_names(rec):
            if value is not None:
                self.by_name.setdefault(name, []).append(float(value))

    @property
    def flaky(self) -> bool:
        return 0 < self.passed < self.n

    def as_dict(self) -> dict[str, Any]:
        lo, hi = wilson(self.passed, self.n)
        out: dict[str, Any] = {"label": self.label, "runs": self.n, "passed": self.passed, "errors": self.errors,
                               "pass_rate": round(self.passed / self.n if self.n else 0.0, 4), "pass_rate_ci": [round(lo, 4), round(hi, 4)],
                               "flaky": self.flaky}
        if self.scores:
            m, slo, shi = mean_ci(self.scores)
            out["score"] = {"mean": round(m, 4), "ci": [round(slo, 4), round(shi, 4)]}
        out["metrics"] = {name: dict(zip(("mean", "lo", "hi"), (round(x, 4) for x in mean_ci(v)), strict=True))
                          for name, v in self.by_name.items()}
        return out


@dataclass
class RepeatReport:
    repeat: int
    groups: list[GroupStats]

    @property
    def flaky(self) -> list[GroupStats]:
        return [g for g in self.groups if g.flaky]

    def summary(self) -> dict[str, Any]:
        """What the run summary (and the history) keeps."""
        flaky = self.flaky
        return {"repeat": self.repeat, "groups": len(self.groups), "flaky_count": len(flaky),
                "flaky": [{"label": g.label, "passed": g.passed, "runs": g.n} for g in flaky[:50]]}


def summarise(records: Iterable[dict[str, Any]], repeat: int) -> RepeatReport:
    groups: dict[tuple[Any, ...], GroupStats] = {}
    for rec in records:
        key = group_key(rec)
        if key not in groups:
            groups[key] = GroupStats(key, group_label(rec))
        groups[key].add(rec)
    return RepeatReport(repeat, list(groups.values()))
