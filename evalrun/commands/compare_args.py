"""Argument parsers of `evalrun runs` and `evalrun compare` (kept out of cli.py), and where their history is.
Imports nothing heavy at module level: cli.py builds every parser for every command."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def _where(p: argparse.ArgumentParser) -> None:
    p.add_argument("-c", "--config", default=None, metavar="CONFIG",
                   help="read the history next to this config (default: .evalrun in the current folder)")
    p.add_argument("--dir", default=None, metavar="DIR", help="a .evalrun folder, or the folder holding one")
    p.add_argument("--debug", action="store_true", help=argparse.SUPPRESS)


def add_parsers(sub: Any) -> None:
    ru = sub.add_parser("runs", help="list recorded runs (.evalrun/history.sqlite)")
    _where(ru)
    ru.add_argument("-n", "--limit", type=int, default=20, metavar="N", help="newest N runs (default 20, 0: all)")
    ru.add_argument("--json", action="store_true", help="print as JSON")

    co = sub.add_parser("compare", help="what changed between two runs (default: latest~1 latest)")
    co.add_argument("a", nargs="?", default="latest~1", metavar="A",
                    help="baseline: a run id, latest, latest~N, or a results .jsonl / .json file")
    co.add_argument("b", nargs="?", default="latest", metavar="B", help="the run compared with A (default latest)")
    _where(co)
    co.add_argument("--format", choices=["text", "json", "markdown"], default="text", help="stdout format")
    co.add_argument("-o", "--output", action="append", default=[], metavar="FILE",
                    help="also write the diff; format from the extension: .json .md .html")
    co.add_argument("--fail-on", choices=["regression"], default=None,
                    help="exit 100 when anything regressed beyond --tolerance (a CI gate)")
    co.add_argument("--tolerance", type=float, default=0.0, metavar="X",
                    help="score or pass-rate drop (0-1) still accepted as unchanged (default 0)")


def state_of(args: argparse.Namespace) -> Path:
    """The .evalrun folder `runs` and `compare` read (imports the run package only now: building the parser
    for any command must stay cheap)."""
    from evalrun.run import rundir
    from evalrun.run.history import DB_NAME

    if args.dir:
        d = Path(args.dir)
        return d if d.name == rundir.STATE_DIR or (d / DB_NAME).exists() else d / rundir.STATE_DIR
    if args.config:
        return rundir.state_dir([args.config])
    return Path.cwd() / rundir.STATE_DIR
