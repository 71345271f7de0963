"""What earlier runs left: `evalrun runs` lists a `.evalrun` folder's runs, newest first; `evalrun compare A B`
says what changed between two (exit 100 on a regression with --fail-on regression); `evalrun view [DIR]` serves
them as a local read-only web page; `evalrun cache stats|clear` (the response cache; never imports litellm)."""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from evalrun.cache import ResponseCache
from evalrun.errors import UsageError
from evalrun.run import history, recording
from evalrun.signals import interrupt_raises

EXIT_REGRESSION = 100
#: Control characters a history row (shared or forged) could use to drive the terminal (escape sequences).
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
OUTPUTS = (".json", ".md", ".html")


def state_of(args: argparse.Namespace) -> Path:
    """The .evalrun folder `runs` and `compare` read: --dir, else next to -c CONFIG, else in the current folder."""
    return recording.given_state_dir(args.dir) if args.dir else recording.state_dir([args.config] if args.config else [])


def list_runs(args: argparse.Namespace) -> int:
    """id, when, status, results, grader, git commit of each run."""
    store = history.History(state_of(args))
    runs = store.list(args.limit or None)
    for run_id, why in store.malformed.items():
        print(f"evalrun: run {run_id!r} left out: {why}", file=sys.stderr)
    if args.json:
        print(json.dumps([r.as_dict() for r in runs], indent=2, ensure_ascii=False))
        return 0
    if not runs:
        print("No runs recorded yet.")
        return 0
    print(f"{'RUN':<23} {'STARTED (UTC)':<20} {'STATUS':<11} {'PASS':>6} {'FAIL':>5} {'ERR':>4} {'RATE':>7}  "
          "GIT           GRADER / DESCRIPTION")
    for r in runs:
        s = r.summary or {}
        rate = f"{s['pass_rate']:.1f}%" if isinstance(s.get("pass_rate"), (int, float)) else "–"
        rep = s.get("repeats")
        flaky = f" [{rep['flaky_count']} flaky of {rep['groups']} x{rep['repeat']}]" if rep else ""
        what = ", ".join(r.graders) or "no grader"
        if r.description:
            what += f" · {r.description}"
        print(_CONTROL.sub("?", f"{r.id:<23} {r.started_at.replace('T', ' ').rstrip('Z'):<20} {r.status:<11} "
              f"{s.get('passed', '–'):>6} {s.get('failed', '–'):>5} {s.get('errors', '–'):>4} {rate:>7}  "
              f"{(r.git_commit or '–'):<13} {what}{flaky}"))
    return 0


def compare(args: argparse.Namespace) -> int:
    from evalrun.compare import diff, match

    if not 0 <= args.tolerance <= 1:
        raise UsageError("--tolerance is a score or pass-rate difference between 0 and 1", key="--tolerance")
    for out in args.output:
        if Path(out).suffix.lower() not in OUTPUTS:
            raise UsageError(f"unknown output format for {out!r}", key="--output",
                             hint=f"use one of the extensions {', '.join(OUTPUTS)}")
    runs = history.History(state_of(args))
    a, b = match.load(args.a, runs), match.load(args.b, runs)
    d = diff.compare(a.records, b.records, tolerance=args.tolerance)
    data = diff.as_dict(d, {"ref": a.ref, "label": a.label, "run": a.info or None},
                          {"ref": b.ref, "label": b.label, "run": b.info or None})
    as_json = json.dumps(data, indent=2, ensure_ascii=False, default=str)
    if args.format == "json":
        print(as_json)
    elif args.format == "markdown":
        print(diff.markdown(data), end="")
    else:
        print(diff.text(data))
    for out in args.output:
        path = Path(out)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            if path.suffix.lower() == ".html":
                from evalrun.report import html

                html.write_diff(path, data, d)
            else:
                path.write_text(as_json if path.suffix.lower() == ".json" else diff.markdown(data), encoding="utf-8")
        except OSError as e:
            raise UsageError(f"cannot write {out!r}: {e.strerror or e}", key="--output") from None
        print(f"Wrote {out}", file=sys.stderr)
    if args.fail_on == "regression" and data["summary"]["regressions"]:
        return EXIT_REGRESSION
    return 0


def view(args: argparse.Namespace) -> int:
    from evalrun.view import server

    if args.port is not None and not 0 <= args.port <= 65535:
        raise UsageError(f"--port {args.port} is not a port", key="--port", hint="0-65535 (0: any free port)")
    if not Path(args.dir).exists():
        raise UsageError(f"no folder {args.dir!r}", key="DIR", hint="give the folder of a config that has been run")
    state = recording.given_state_dir(args.dir)  # DIR itself, the one in DIR, or the one next to a config file
    if not state.is_dir():
        raise UsageError(f"no runs in {args.dir!r}: it has no {history.STATE_DIR} folder", key="DIR",
                         hint="run `evalrun eval` there first, or give the folder of the config whose runs to show")
    state = state.resolve()
    srv, note = server.start(state, args.host, args.port, args.allow_host or ())
    with interrupt_raises():  # Ctrl-C ends serving: exit 0
        try:
            if note:
                print(f"evalrun view: {note}", file=sys.stderr)
            if args.host not in server.LOOPBACK:
                print(f"evalrun view: listening on {args.host}: anyone who can reach this address can read these "
                      "results; requests must name this machine (its names or an address) or an --allow-host NAME",
                      file=sys.stderr)
            print(f"evalrun view: the runs in {state} at {srv.url} (read-only; Ctrl-C to stop)", flush=True)
            srv.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            srv.server_close()
    return 0


def _size(n: int) -> str:
    value = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{n} B"  # pragma: no cover


def cache(args: argparse.Namespace) -> int:
    cache = ResponseCache()
    try:
        if args.action == "clear":
            removed = cache.clear()
            print(f"cleared {removed} cached response{'s' if removed != 1 else ''} from {cache.path}")
            return 0
        stats = cache.stats()
        print(f"cache: {stats['path']}")
        if not stats["exists"]:
            print("entries: 0 (no cache file yet: nothing has been cached)")
            return 0
        print(f"entries: {stats['entries']}\nhits: {stats['hits']}\nsize: {_size(stats['bytes'])}")
        for model, count in stats["models"].items():
            print(f"  {model}: {count}")
        return 0
    finally:
        cache.close()
