"""Statistics over `--repeat N`, per group (one case's repeats): pass rate with its Wilson interval, each score's mean
with a seeded bootstrap interval, and whether it is flaky (passed in some repeats only)."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

Z95 = 1.959964
#: Bootstrap resamples of a mean's interval, and the fixed seed that makes the interval a function of the values.
RESAMPLES = 2000
SEED = 25


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
    """(name, score) of each assertion: its metric name, else `type[index]` (as in the key path `assert[index]`)."""
    return [(str(a.get("metric") or f"{a.get('type')}[{i}]"),
             a.get("score") if isinstance(a.get("score"), (int, float)) else None)
            for i, a in enumerate(rec.get("assertions") or [])]


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
