"""The `.evalrun/` folder next to the config: one results file per run, and the `last-run.jsonl` pointer.

    state_dir(config_files)      <folder of the first config>/.evalrun
    new_run_id()                 sortable, unique: 20261123-101547-3f9a1c
    results_path(state, run_id)  .evalrun/runs/<run_id>.jsonl
    point_last_run(state, path)  .evalrun/last-run.jsonl -> that file (replaced atomically)
    last_run(state)              the file the pointer names, or None

Each run writes only its own file, so two runs started in the same folder never truncate or read each
other's results. The pointer is a symbolic link (a hard link where symlinks are not allowed), swapped in with
one rename, so a reader sees either the previous run's file or the new one, never a half-written pointer.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import time
from collections.abc import Sequence
from pathlib import Path

STATE_DIR = ".evalrun"
LAST_RUN = "last-run.jsonl"


def state_dir(config_files: Sequence[str]) -> Path:
    """`.evalrun` in the folder of the first config file (the current folder when there is none)."""
    base = Path(config_files[0]).resolve().parent if config_files else Path.cwd()
    return base / STATE_DIR


def new_run_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S", time.localtime()) + "-" + secrets.token_hex(3)


def results_path(state: Path, run_id: str) -> Path:
    return state / "runs" / f"{run_id}.jsonl"


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
    return


def last_run(state: Path) -> Path | None:
    """The results file `last-run.jsonl` points at (itself when it is a plain file), or None."""
    link = state / LAST_RUN
    if link.is_symlink():
        target = link.resolve()
        return target if target.exists() else None
    return link if link.exists() else None
