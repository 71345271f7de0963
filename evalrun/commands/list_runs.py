"""`evalrun runs`: the recorded runs, newest first (id, when, status, results, grader, git commit)."""

from __future__ import annotations

import argparse
import json

from evalrun.commands.compare_args import state_of
from evalrun.run.history import History


def run(args: argparse.Namespace) -> int:
    runs = History(state_of(args)).list(args.limit or None)
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
        print(f"{r.id:<23} {r.started_at.replace('T', ' ').rstrip('Z'):<20} {r.status:<11} "
              f"{s.get('passed', '–'):>6} {s.get('failed', '–'):>5} {s.get('errors', '–'):>4} {rate:>7}  "
              f"{(r.git_commit or '–'):<13} {what}{flaky}")
    return 0
