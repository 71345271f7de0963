"""Where a run's results go and how it is recorded: `.evalrun/` next to the config, a results file of its own
(`.evalrun/runs/RUN_ID.jsonl`, so concurrent runs never share one), the `last-run.jsonl` pointer (a link swapped
in with one rename) and the run's history row. History failures are warnings, never the run's.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import secrets
import sqlite3
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalrun import __version__
from evalrun.assertions.named_metrics import compile_derived
from evalrun.run import repeats
from evalrun.run.history import DB_NAME, History
from evalrun.run.options import RunOptions
from evalrun.run.tally import RunOutcome, Tally
from evalrun.types import Suite

STATE_DIR = ".evalrun"
LAST_RUN = "last-run.jsonl"


def state_dir(config_files: Sequence[str]) -> Path:
    """`.evalrun` in the folder of the first config file (the current folder when there is none)."""
    base = Path(config_files[0]).resolve().parent if config_files else Path.cwd()
    return base / STATE_DIR


def given_state_dir(where: str | Path) -> Path:
    """The `.evalrun` folder a user's DIR means: DIR itself (or one holding a history), else DIR/.evalrun; a
    config file's folder for a file."""
    d = Path(where)
    if d.is_file():
        d = d.resolve().parent
    return d if d.name == STATE_DIR or (d / DB_NAME).exists() else d / STATE_DIR


def new_run_id() -> str:
    """Sortable and unique: 20261123-101547-3f9a1c."""
    return time.strftime("%Y%m%d-%H%M%S", time.localtime()) + "-" + secrets.token_hex(3)


def point_last_run(state: Path, target: Path) -> None:
    """Make `state/last-run.jsonl` name `target`; best effort (a failure leaves the old pointer)."""
    link = state / LAST_RUN
    tmp = state / f".{LAST_RUN}.{os.getpid()}.{secrets.token_hex(2)}"
    try:
        rel = os.path.relpath(target.resolve(), state.resolve())
    except ValueError:  # another drive (Windows)
        rel = str(target.resolve())
    for make in (lambda: os.symlink(rel, tmp), lambda: os.link(target, tmp)):
        try:
            make()
        except OSError:
            continue
        try:
            os.replace(tmp, link)
            return
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def last_run(state: Path) -> Path | None:
    """The results file `last-run.jsonl` points at (itself when it is a plain file), or None."""
    link = state / LAST_RUN
    if link.is_symlink():
        target = link.resolve()
        return target if target.exists() else None
    return link if link.exists() else None


@dataclass
class RunFiles:
    run_id: str
    results_file: Path
    state: Path
    history: History | None


def _warn(what: str, e: BaseException) -> None:
    print(f"evalrun: warning: could not {what} the run history: {e}", file=sys.stderr)


def plan(suite: Suite, opts: RunOptions) -> RunFiles:
    """The run id and results file, chosen before the run."""
    state = state_dir(suite.files)
    history = History(state) if opts.history else None
    if opts.results_file is None:
        new_id = new_run_id()
        return RunFiles(new_id, state / "runs" / f"{new_id}.jsonl", state, history)
    run_id: str | None = None
    if opts.resume and history is not None:
        try:
            found = history.find_by_results(opts.results_file)
            run_id = found.id if found else None
        except (sqlite3.Error, OSError) as e:
            _warn("read", e)
    return RunFiles(run_id or new_run_id(), opts.results_file, state, history)


def begin(files: RunFiles, suite: Suite, opts: RunOptions) -> None:
    """Point last-run at the results file; the history row `running`."""
    point_last_run(files.state, files.results_file)
    if files.history is None:
        return
    try:
        files.history.start(files.run_id, description=suite.description, config_files=suite.files,
                            options={k: v for k, v in dataclasses.asdict(opts).items()
                                     if k not in ("results_file", "progress", "history")},
                            results_file=files.results_file, version=__version__)
    except (sqlite3.Error, OSError) as e:
        _warn("write", e)
        files.history = None


def end(files: RunFiles, *, status: str, summary: dict[str, Any], graders: list[str]) -> None:
    """The history row `finished`, `interrupted` or `failed`."""
    if files.history is None:
        return
    try:
        files.history.finish(files.run_id, status=status, summary=summary, graders=graders)
    except (sqlite3.Error, OSError) as e:
        _warn("write", e)


def finish(files: RunFiles, suite: Suite, opts: RunOptions, tally: Tally, status: str) -> RunOutcome:
    """The outcome of a run whose cases are all tallied (by the runner, --workers or Ray): derived metrics,
    statistics over repeats, the history row."""
    tally.finished = tally.finished or time.time()
    tally.derived = tally.derived or tuple(compile_derived(suite.derived_metrics))
    outcome = RunOutcome(suite, tally, files.results_file, files.run_id)
    if opts.repeat > 1:
        outcome.repeats = repeats.summarise(outcome.iter_results(), opts.repeat)
        tally.repeat_summary = outcome.repeats.summary()
    end(files, status=status, summary=tally.summary(), graders=tally.graders)
    return outcome

