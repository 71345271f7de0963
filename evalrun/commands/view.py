"""`evalrun view [DIR]`: serve the runs of DIR's `.evalrun` folder as a local, read-only web page until Ctrl-C."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from evalrun.errors import UsageError


def state_dir(where: str) -> Path:
    """The `.evalrun` folder DIR means: DIR itself, the one in DIR, or the one next to a config file."""
    from evalrun.run.recording import STATE_DIR, given_state_dir

    if not Path(where).exists():
        raise UsageError(f"no folder {where!r}", key="DIR", hint="give the folder of a config that has been run")
    d = given_state_dir(where)
    if not d.is_dir():
        raise UsageError(f"no runs in {where!r}: it has no {STATE_DIR} folder", key="DIR",
                         hint="run `evalrun eval` there first, or give the folder of the config whose runs to show")
    return d.resolve()


def run(args: argparse.Namespace) -> int:
    from evalrun.signals import interrupt_raises
    from evalrun.view import server

    if args.port is not None and not 0 <= args.port <= 65535:
        raise UsageError(f"--port {args.port} is not a port", key="--port", hint="0-65535 (0: any free port)")
    state = state_dir(args.dir)
    srv, note = server.start(state, args.host, args.port)
    with interrupt_raises():  # Ctrl-C ends serving: exit 0
        try:
            if note:
                print(f"evalrun view: {note}", file=sys.stderr)
            if args.host not in server.LOOPBACK:
                print(f"evalrun view: listening on {args.host}: anyone who can reach this address can read these "
                      "results", file=sys.stderr)
            print(f"evalrun view: the runs in {state} at {srv.url} (read-only; Ctrl-C to stop)", flush=True)
            srv.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            srv.server_close()
    return 0
