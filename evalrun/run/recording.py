"""Recording a run: where its files go (`.evalrun/` next to the config, `runs/RUN_ID.jsonl`, the `RUN_ID.run.json`
beside it, the `last-run.jsonl` pointer) and its start and end in the history (history.py); history failures are
warnings, never the run's."""

from __future__ import annotations

import contextlib
import dataclasses
import json
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
from evalrun.assertions.engine import compile_derived
from evalrun.credentials import strip_userinfo
from evalrun.run.history import DB_NAME, LAST_RUN, STATE_DIR, History, config_folder
from evalrun.run.options import RunOptions
from evalrun.run.tally import RunOutcome, Tally, iso_time, summarise
from evalrun.types import Suite


def state_dir(config_files: Sequence[str]) -> Path:
    """`.evalrun` in the folder of the first config file (the current folder when there is none)."""
    return config_folder(config_files) / STATE_DIR


def given_state_dir(where: str | Path) -> Path:
    """The `.evalrun` folder a user's DIR (or a config file) means."""
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
        if not opts.write:  # --no-write: nothing under .evalrun; the results file in a temporary folder
            import tempfile

            return RunFiles(new_id, Path(tempfile.mkdtemp(prefix="evalrun-")) / f"{new_id}.jsonl", state, None)
        return RunFiles(new_id, state / "runs" / f"{new_id}.jsonl", state, history)
    run_id: str | None = None
    if opts.resume and history is not None:
        try:
            target = opts.results_file.resolve()  # the run that wrote it
            found = history.list() if history.path.exists() else []
            run_id = next((r.id for r in found if r.results_file.resolve() == target), None)
        except (sqlite3.Error, OSError) as e:
            _warn("read", e)
    return RunFiles(run_id or new_run_id(), opts.results_file, state, history)


#: next to a run's own results file `runs/RUN_ID.jsonl`: `runs/RUN_ID.run.json`, what the run was (its config and
#: description), written with or without the history, so `evalrun view` can tell the files of different configs apart
RUN_INFO = ".run.json"


def run_info_path(results_file: Path) -> Path:
    return results_file.with_name(results_file.stem + RUN_INFO)


def write_run_info(files: RunFiles, suite: Suite) -> None:
    """The run's own record next to its results file in `runs/` (best effort: a failure costs the view a label)."""
    if files.results_file.parent.resolve() != (files.state / "runs").resolve():
        return  # a file the user placed elsewhere: nothing written next to it
    info = {"run_id": files.run_id, "description": suite.description, "started_at": iso_time(),
            "config_files": [str(Path(f).resolve()) for f in suite.files], "version": __version__}
    with contextlib.suppress(OSError):
        files.results_file.parent.mkdir(parents=True, exist_ok=True)
        run_info_path(files.results_file).write_text(json.dumps(info, ensure_ascii=False) + "\n", encoding="utf-8")


def read_run_info(results_file: Path) -> dict[str, Any] | None:
    """What `write_run_info` recorded for this results file, or None (an older run, a file from elsewhere)."""
    try:
        data = json.loads(run_info_path(results_file).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def begin(files: RunFiles, suite: Suite, opts: RunOptions) -> None:
    """Point last-run at the results file and record what the run is (neither under --no-write); the history
    row `running`."""
    if opts.write:
        point_last_run(files.state, files.results_file)
        if not opts.resume:
            write_run_info(files, suite)
    if files.history is None:
        return
    try:
        files.history.start(files.run_id, description=suite.description, config_files=suite.files,
                            options={k: strip_userinfo(v) if isinstance(v, str) else v  # --grader URL
                                     for k, v in dataclasses.asdict(opts).items()
                                     if k not in ("results_file", "progress", "history")},
                            results_file=files.results_file, version=__version__)
    except (sqlite3.Error, OSError) as e:
        _warn("write", e)
        files.history = None


def end(files: RunFiles, status: str, tally: Tally) -> None:
    """The history row (and the run's own record) `finished`, `interrupted` or `failed`."""
    info = read_run_info(files.results_file)
    if info is not None and info.get("run_id") == files.run_id:
        with contextlib.suppress(OSError):
            info.update(status=status, finished_at=iso_time())
            run_info_path(files.results_file).write_text(json.dumps(info, ensure_ascii=False) + "\n",
                                                         encoding="utf-8")
    if files.history is None:
        return
    try:
        files.history.finish(files.run_id, status=status, summary=tally.summary(), graders=tally.graders)
    except (sqlite3.Error, OSError) as e:
        _warn("write", e)


def finish(files: RunFiles, suite: Suite, opts: RunOptions, tally: Tally, status: str) -> RunOutcome:
    """The outcome of a run whose cases are all tallied: derived metrics, statistics over repeats, the history row."""
    tally.finished = tally.finished or time.time()
    tally.derived = tally.derived or tuple(compile_derived(suite.derived_metrics))
    outcome = RunOutcome(suite, tally, files.results_file, files.run_id)
    if opts.repeat > 1:
        outcome.repeats = summarise(outcome.iter_results(), opts.repeat)
        tally.repeat_summary = outcome.repeats.summary()
    end(files, status, tally)
    return outcome

