"""The console table promptfoo users know, and the run summary.

Table: one row per test x var combination (x repeat), one column per provider x prompt. A cell's first line is
`[PASS] output`, `[FAIL] output` or `[ERROR] message`; below it, one line per graded assertion (its score
against its threshold and the claim that decided it) and per failing assertion (casetext.brief), at most
`CELL_LINES` lines. Every line is cut to fit the terminal. Long runs show the first `max_rows` rows; the records
are re-read from the results file (only those shown are kept in memory). The summary ends with each graded
type's mean score.
"""

from __future__ import annotations

import json
import shutil
import textwrap
from typing import Any

from evalrun.report.casetext import brief

MAX_ROWS = 200
CELL_MAX = 160
CELL_LINES = 6
WRAP = 2  # physical lines an assertion's line may take in its column


def shorten(text: str, limit: int = CELL_MAX) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _fit(text: str, limit: int) -> str:
    """Cut to `limit` characters, its leading indent kept (cell lines are one line each already)."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def vars_label(vars: dict[str, Any], limit: int = 80) -> str:
    parts = [f"{k}={v if isinstance(v, str) else json.dumps(v, default=str)}" for k, v in vars.items()]
    return shorten(", ".join(parts), limit)


def cell_lines(rec: dict[str, Any]) -> list[str]:
    """The cell of one case: its verdict line, then each graded or failing assertion in brief."""
    status = rec.get("status")
    asserts = rec.get("assertions") or []
    if status == "error":  # the error first; the other assertions' results below it
        lines = ["[ERROR] " + shorten(str(rec.get("error") or rec.get("reason") or ""))]
        asserts = [a for a in asserts if not a.get("error")]
    else:
        lines = [f"[{'PASS' if status == 'pass' else 'FAIL'}] " + shorten(str(rec.get("output") or ""))]
    shown = [a for a in asserts if a.get("grader") or a.get("error") or not a.get("pass")]
    lines += ["  " + ("✓ " if a.get("pass") else "✗ ") + shorten(brief(a)) for a in shown[:CELL_LINES - 1]]
    if len(shown) > CELL_LINES - 1:
        lines.append(f"  ... {len(shown) - CELL_LINES + 1} more assertions (-o report.html shows them)")
    if status == "fail" and not any(not a.get("pass") for a in shown):  # failed on the test's threshold
        lines.append("  ✗ " + shorten(str(rec.get("reason") or "")))
    return lines


def _row_key(rec: dict[str, Any]) -> str:
    return f"{rec.get('test_index', 0)}:{rec.get('repeat', 0)}:{json.dumps(rec.get('vars'), default=str)}"


def _row_label(rec: dict[str, Any]) -> str:
    vars = rec.get("vars") or {}
    desc = rec.get("description")
    if not desc:
        return vars_label(vars)
    return shorten(str(desc), 40) + (" | " + vars_label(vars) if vars else "")


def table(outcome: Any, *, width: int | None = None, max_rows: int = MAX_ROWS) -> str:
    """Rows = test x var combination (x repeat), columns = provider x prompt; the first `max_rows` rows."""
    columns: list[str] = []
    grid: dict[str, dict[str, list[str]]] = {}
    labels: dict[str, str] = {}
    shown = 0
    for rec in outcome.iter_results():
        key = _row_key(rec)
        if key not in grid:
            if len(grid) >= max_rows:
                break  # a row's cells are contiguous in expansion order: the rest are later rows
            grid[key] = {}
            labels[key] = _row_label(rec)
        column = f"[{rec.get('provider')}] {rec.get('prompt_label') or ''}".rstrip()
        if column not in columns:
            columns.append(column)
        grid[key][column] = cell_lines(rec)
        shown += 1
    if not grid:
        return "No cases ran."
    width = width or shutil.get_terminal_size((120, 24)).columns
    first_w = min(40, max(8, *(len(v) for v in labels.values())))
    col_w = max(16, (width - first_w - 3 * len(columns) - 1) // max(1, len(columns)))
    widths = [first_w] + [col_w] * len(columns)

    def line(values: list[str]) -> str:
        return "| " + " | ".join(_fit(v, w).ljust(w) for v, w in zip(values, widths, strict=True)) + " |"

    def wrapped(cell: list[str]) -> list[str]:
        """The verdict line cut to the column; an assertion line wrapped onto at most WRAP lines."""
        out = cell[:1]
        for text in cell[1:]:
            parts = textwrap.wrap(text, col_w, subsequent_indent="      ") or [""]
            out += parts[:WRAP - 1] + (["".join(parts[WRAP - 1:])] if len(parts) >= WRAP else [])
        return out

    sep = "+" + "+".join("-" * (w + 2) for w in widths) + "+"
    out = [sep, line(["test", *columns]), sep.replace("-", "=")]
    previous_tall = False
    for n, (key, raw) in enumerate(grid.items()):
        cells = {c: wrapped(v) for c, v in raw.items()}
        height = max(len(c) for c in cells.values())
        if n and (previous_tall or height > 1):
            out.append(sep)  # a row of several lines is ruled off; runs of one-line rows stay compact
        previous_tall = height > 1
        for i in range(height):
            first = labels[key] if i == 0 else ""
            out.append(line([first, *((cells.get(c) or [""] * height)[i] if i < len(cells.get(c) or [])
                                      else "" for c in columns)]))
    out.append(sep)
    more = len(outcome.rows()) - shown
    if more > 0:
        out.append(f"... {more} more cases not shown (write them all with -o results.html or .csv)")
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
    cases = "case" if s["total"] == 1 else "cases"
    lines = [f"Results: {s['passed']} passed, {s['failed']} failed, {errors} of {s['total']} {cases} "
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
    named = {**s.get("metrics", {}), **{k: v for k, v in s.get("derived_metrics", {}).items()}}
    if named:
        lines.append("Metrics: " + ", ".join(
            f"{k} {v:.2f}" if isinstance(v, (int, float)) else f"{k} n/a" for k, v in named.items()))
    graded = s.get("graded")
    if graded:
        lines.append("Graded means: " + ", ".join(
            f"{name} {g['mean']:.2f}{' (lower is better)' if g.get('lower_is_better') else ''} "
            f"[{g['passed']}/{g['count']} passed]" for name, g in graded.items()))
    lines.append(grader_line(s["graders"]))
    rep = s.get("repeats")
    if rep:
        text = f"Repeats: {rep['repeat']} runs of each of {rep['groups']} cases; "
        if rep["flaky_count"]:
            flaky = "; ".join(f"{f['label']} ({f['passed']}/{f['runs']} passed)" for f in rep["flaky"][:10])
            more = rep["flaky_count"] - min(10, len(rep["flaky"]))
            text += f"{rep['flaky_count']} flaky: {flaky}" + (f"; and {more} more" if more > 0 else "")
        else:
            text += "none flaky"
        lines.append(text)
    if s["interrupted"]:
        lines.append("Interrupted: finished cases are kept; continue with the same command and --resume")
    return "\n".join(lines)
