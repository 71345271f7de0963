"""The console table promptfoo users know, and the run summary.

Table: one row per test x var combination (x repeat), one column per provider x prompt; cells `[PASS] output`,
`[FAIL] reason`, `[ERROR] message`, cut to fit the terminal. Long runs show the first `max_rows` rows.
"""

from __future__ import annotations

import shutil
from typing import Any

from evalrun.run.tally import shorten

MAX_ROWS = 200


def table(outcome: Any, *, width: int | None = None, max_rows: int = MAX_ROWS) -> str:
    rows = outcome.rows()
    if not rows:
        return "No cases ran."
    columns: list[str] = []
    grid: dict[str, dict[str, str]] = {}
    for r in rows:
        if r.column not in columns:
            columns.append(r.column)
        cells = grid.setdefault(r.row_key, {})
        cells[r.column] = r.cell
    labels = outcome.tally.row_labels
    width = width or shutil.get_terminal_size((120, 24)).columns
    first_w = min(40, max(8, *(len(labels.get(k, "")) for k in list(grid)[:max_rows])))
    col_w = max(16, (width - first_w - 3 * len(columns) - 1) // max(1, len(columns)))
    header = ["test", *columns]
    widths = [first_w] + [col_w] * len(columns)

    def line(values: list[str]) -> str:
        return "| " + " | ".join(shorten(v, w).ljust(w) for v, w in zip(values, widths, strict=True)) + " |"

    sep = "+" + "+".join("-" * (w + 2) for w in widths) + "+"
    out = [sep, line(header), sep.replace("-", "=")]
    for i, (key, cells) in enumerate(grid.items()):
        if i >= max_rows:
            out.append(sep)
            out.append(f"... {len(grid) - max_rows} more rows (write them all with -o results.html or .csv)")
            return "\n".join(out)
        out.append(line([labels.get(key, key), *(cells.get(c, "") for c in columns)]))
    out.append(sep)
    return "\n".join(out)


def _int(n: int) -> str:
    return f"{n:,}"


def grader_line(graders: list[str]) -> str:
    if not graders:
        return "Graded by: no graded assertions in this run"
    text = "Graded by " + ", ".join(graders)
    if all(g.startswith("builtin") for g in graders):
        text += " — set --grader MODEL for an LLM grader"
    return text


def summary(outcome: Any) -> str:
    s: dict[str, Any] = outcome.summary
    rate = f"{s['pass_rate']:.2f}%" if s["pass_rate"] is not None else "n/a"
    errors = f"{s['errors']} error" + ("s" if s["errors"] != 1 else "")
    lines = [f"Results: {s['passed']} passed, {s['failed']} failed, {errors} of {s['total']} cases "
             f"({rate} pass rate) in {s['duration_s']:.2f}s"]
    if s["resumed"]:
        lines[0] += f"; {s['resumed']} resumed from the previous run"
    pt, gt = s["tokens"]["provider"], s["tokens"]["grader"]
    tokens = f"Tokens: provider {_int(pt['total'])} (prompt {_int(pt['prompt'])}, completion " \
             f"{_int(pt['completion'])})"
    if s["cached"]:
        tokens += f", {s['cached']} cached responses"
    tokens += f"; grader {_int(gt['total'])}"
    cost = s["cost"]
    if cost["provider"] is not None or cost["grader"]:
        tokens += f". Cost: provider ${cost['provider'] or 0:.4f}, grader ${cost['grader']:.4f}"
    lines.append(tokens)
    lines.append(grader_line(s["graders"]))
    if s["interrupted"]:
        lines.append("Interrupted: finished cases are kept; continue with the same command and --resume")
    return "\n".join(lines)
