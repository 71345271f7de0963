"""Run options: the CLI flags and `evaluateOptions` merged (CLI wins)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalrun.errors import UsageError


@dataclass
class RunOptions:
    max_concurrency: int = 4
    repeat: int = 1
    delay_ms: int = 0
    timeout_s: float | None = None
    use_cache: bool = True
    grader: str | None = None
    filter_pattern: str | None = None
    filter_first_n: int | None = None
    filter_failing: str | None = None  # path of a previous results .json/.jsonl
    failing_kind: str = "failing"  # which of its cases: split.FAILING_KINDS (--filter-failing-only, ...)
    retry_errors: bool = False  # --retry-errors: resume the results file, running its ERROR cases again
    #: None: a new file of its own, .evalrun/runs/<run id>.jsonl next to the config (evalrun/run/history.py)
    results_file: Path | None = None
    resume: bool = False
    progress: bool = False
    #: record the run in .evalrun/history.sqlite (`evalrun eval` does unless --no-history; the API on request)
    history: bool = False
    #: write under .evalrun (the run's results file, the last-run pointer); False: --no-write
    write: bool = True
    shard: tuple[int, int] | None = None  # (k, n): run shard k of n (--shard K/N)

    @classmethod
    def merge(cls, evaluate_options: dict[str, Any], **cli: Any) -> RunOptions:
        """CLI values (None = not given) over the config's evaluateOptions over the defaults."""
        eo = dict(evaluate_options or {})
        if isinstance(eo.get("timeoutMs"), (int, float)):
            eo["timeout_s"] = eo["timeoutMs"] / 1000.0
        opts = cls(use_cache=not cli.get("no_cache") and eo.get("cache", True) is not False,
                   results_file=Path(cli["results_file"]) if cli.get("results_file") else None,
                   resume=bool(cli.get("resume")), history=bool(cli.get("history")),
                   write=cli.get("write", True) is not False)
        for name, key in (("max_concurrency", "maxConcurrency"), ("repeat", "repeat"), ("delay_ms", "delay"),
                          ("timeout_s", "timeout_s"), ("grader", ""), ("filter_pattern", ""), ("filter_first_n", ""),
                          ("filter_failing", ""), ("failing_kind", ""), ("retry_errors", ""), ("progress", ""),
                          ("shard", "")):
            value = cli.get(name)
            if value is None and key:  # "": a CLI flag only
                value = eo.get(key)
            if value is not None:
                setattr(opts, name, value)
        opts.check()
        return opts

    def check(self) -> None:
        """Every number within its range (NaN and infinity rejected): a usage error, before any call."""
        for name, flag, key, lo, hi in _RANGES:
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))
                                      or not math.isfinite(value) or not lo <= value <= hi):
                raise UsageError(f"{flag} {value!r} is out of range: must be a number between {lo:,.0f} and "
                                 f"{hi:,.0f}", hint=f"`{key}` in evaluateOptions has the same range")
        if self.timeout_s is not None and self.timeout_s <= 0:
            raise UsageError("--timeout must be positive", key="timeoutMs")
        if self.filter_first_n is not None and self.filter_first_n < 0:
            raise UsageError("--filter-first-n must not be negative")
        self.max_concurrency, self.repeat, self.delay_ms = int(self.max_concurrency), int(self.repeat), \
            int(self.delay_ms)


#: (field, flag, evaluateOptions key, lowest, highest)
_RANGES = (("max_concurrency", "--max-concurrency", "maxConcurrency", 1, 1000),
           ("repeat", "--repeat", "repeat", 1, 10_000), ("delay_ms", "--delay", "delay", 0, 3_600_000),
           ("timeout_s", "--timeout", "timeoutMs", 0, 86_400.0))
