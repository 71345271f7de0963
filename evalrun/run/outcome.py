"""A finished run as the reports and the exit code see it: its tally in memory, its records in the results file.

    outcome.summary, outcome.rows(), outcome.iter_results(), outcome.meta()

Made by the runner, by `--workers` and `--executor ray` from their parts, and by `evalrun merge` (run/split.py).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalrun.run.store import read_at
from evalrun.run.tally import Row, Tally
from evalrun.types import Suite


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

    def rows(self) -> Sequence[Row]:
        """Compact rows in expansion order."""
        return self.tally.ordered()

    def iter_results(self) -> Iterator[dict[str, Any]]:
        """Full result records in expansion order, re-read one at a time from the results file."""
        rows = self.rows()
        if not rows:
            return
        with open(self.results_file, "rb") as f:
            for row in rows:
                yield read_at(f, row.offset)

    def meta(self) -> dict[str, Any]:
        from evalrun import __version__

        return {"evalrun_version": __version__, "description": self.suite.description,
                "config_files": list(self.suite.files), "results_file": str(self.results_file),
                "run_id": self.run_id}


