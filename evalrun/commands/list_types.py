"""`evalrun list [--json]`: every assertion type with its summary, YAML keys and defaults."""

from __future__ import annotations

import argparse
import json
import sys
import textwrap

from evalrun.assertions import registry


def run(args: argparse.Namespace) -> int:
    rows = [registry.describe(n) for n in registry.names()]
    if args.json:
        json.dump(rows, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    width = max(len(r["type"]) for r in rows) + 2
    out = [f"{len(rows)} assertion types; prefix any with `not-` to negate it. "
           "G = graded (uses a grader model).", ""]
    for r in rows:
        flag = "G" if r["graded"] else " "
        summary = r["summary"]
        if r["alias_of"]:
            summary += f" (alias of {r['alias_of']})"
        if r["plugin"]:
            summary += f" [plugin {r['plugin']}]"
        out.append(f"{flag} {r['type']:<{width}}{summary}")
        details = r["details"] or r["description"]
        if details:
            out.extend(textwrap.indent(textwrap.fill(details, 100), " " * (width + 2)).splitlines())
    sys.stdout.write("\n".join(out) + "\n")
    return 0
