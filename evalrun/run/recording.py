"""Where a run's results go and how the run is recorded: its own results file, the `last-run.jsonl`
pointer, and (when asked) its row in the history database. History failures (a read-only folder, a locked
database) are warnings: they never fail the run.

    files = plan(suite, options)      choose run id and results file (before the run)
    begin(files, suite, options)      point last-run at it, history row `running`
    end(files, outcome_summary, ...)  history row `finished` / `interrupted` / `failed`
"""

from __future__ import annotations

import sqlite3
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalrun.run import rundir
from evalrun.run.history import History
from evalrun.run.options import RunOptions
from evalrun.types import Suite


@dataclass
class RunFiles:
    run_id: str
    results_file: Path
    state: Path
    history: History | None


def _warn(what: str, e: BaseException) -> None:
    print(f"evalrun: warning: could not {what} the run history: {e}", file=sys.stderr)


def plan(suite: Suite, opts: RunOptions) -> RunFiles:
    state = rundir.state_dir(suite.files)
    history = History(state) if opts.history else None
    if opts.results_file is None:
        new_id = rundir.new_run_id()
        return RunFiles(new_id, rundir.results_path(state, new_id), state, history)
    run_id: str | None = None
    if opts.resume and history is not None:
        try:
            found = history.find_by_results(opts.results_file)
            run_id = found.id if found else None
        except (sqlite3.Error, OSError) as e:
            _warn("read", e)
    return RunFiles(run_id or rundir.new_run_id(), opts.results_file, state, history)


def options_record(opts: RunOptions) -> dict[str, Any]:
    return {"repeat": opts.repeat, "max_concurrency": opts.max_concurrency, "grader": opts.grader,
            "use_cache": opts.use_cache, "filter_pattern": opts.filter_pattern,
            "filter_first_n": opts.filter_first_n, "filter_failing": opts.filter_failing,
            "resume": opts.resume, "timeout_s": opts.timeout_s}


def begin(files: RunFiles, suite: Suite, opts: RunOptions) -> None:
    from evalrun import __version__

    rundir.point_last_run(files.state, files.results_file)
    if files.history is None:
        return
    try:
        files.history.start(files.run_id, description=suite.description, config_files=suite.files,
                            options=options_record(opts), results_file=files.results_file, version=__version__)
    except (sqlite3.Error, OSError) as e:
        _warn("write", e)
        files.history = None


def end(files: RunFiles, *, status: str, summary: dict[str, Any], graders: list[str]) -> None:
    if files.history is None:
        return
    try:
        files.history.finish(files.run_id, status=status, summary=summary, graders=graders)
    except (sqlite3.Error, OSError) as e:
        _warn("write", e)
