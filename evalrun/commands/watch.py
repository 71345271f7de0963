"""`evalrun eval -w/--watch`: run, then run again whenever the config or a file it reads changes (promptfoo's
--watch: the config files, prompt, provider and test files), found by polling modification times."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from evalrun.errors import ConfigError
from evalrun.types import Suite

POLL_SECONDS = 0.5


def watched_files(suite: Suite | None, config_paths: Iterable[str]) -> set[Path]:
    """The config files and the files its prompts, providers and tests were read from."""
    found = {Path(p) for p in config_paths}
    if suite is None:
        return found
    found.update(Path(f) for f in suite.files)
    items: list[Any] = [*suite.prompts, *suite.providers]
    if isinstance(suite.tests, (list, tuple)):
        items.extend(suite.tests)
    for item in items:
        loc = getattr(item, "loc", None)
        if loc is not None and getattr(loc, "file", None):
            found.add(Path(loc.file))
        ref = getattr(item, "id", None)
        if isinstance(ref, str) and ref.startswith("file://"):
            path = Path(ref[7:])  # `file://path.py:function`: the file without the function's name
            found.add(path if path.is_file() else Path(ref[7:].rsplit(":", 1)[0]))
    return {p for p in found if p.is_file()}


def mtimes(paths: Iterable[Path]) -> dict[Path, int]:
    out = {}
    for p in paths:
        try:
            out[p] = os.stat(p).st_mtime_ns
        except OSError:
            out[p] = -1
    return out


def loop(run_once: Callable[[], tuple[int, set[Path]]], *, iterations: int | None = None,
         poll: float = POLL_SECONDS, sleep: Callable[[float], None] = time.sleep) -> int:
    """Run, then wait for a change of the files the run reports and run again; `iterations`: stop after that many
    runs (tests), else until Ctrl-C. A config error in a later run is printed and the watch goes on."""
    runs = 0
    code, files = run_once()
    runs += 1
    while iterations is None or runs < iterations:
        before = mtimes(files)
        print(f"Watching {len(files)} file(s) for changes (Ctrl-C stops) ...", file=sys.stderr)
        while mtimes(files) == before:
            sleep(poll)
        changed = sorted(str(p) for p, t in mtimes(files).items() if before.get(p) != t)
        print(f"File change detected: {', '.join(changed)}", file=sys.stderr)
        try:
            code, files = run_once()
        except ConfigError as e:
            print(f"evalrun: {e}", file=sys.stderr)
            code = 2
        runs += 1
    return code
