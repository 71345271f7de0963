"""GitHub Actions output (`--format github`, automatic when GITHUB_ACTIONS=true): an `::error` per failing test at
its line (paths relative to GITHUB_WORKSPACE), and a Markdown job summary for $GITHUB_STEP_SUMMARY."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path
from typing import Any

from evalrun.report.console import cut, headline, md_cell, shorten, vars_text

MESSAGE_MAX = 4000


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def workspace_path(file: str) -> str:
    """`file` relative to GITHUB_WORKSPACE when it lies inside it, else as given (POSIX separators)."""
    ws = os.environ.get("GITHUB_WORKSPACE")
    path = Path(file)
    if ws:
        full = path if path.is_absolute() else Path.cwd() / path
        try:
            return full.resolve().relative_to(Path(ws).resolve()).as_posix()
        except ValueError:
            pass
    return path.as_posix()


def _case_label(rec: dict[str, Any]) -> str:
    shown = shorten(vars_text(rec.get("vars") or {}), 80)
    return f"[{rec.get('provider')} / {shorten(rec.get('prompt_label'), 60)}]" + (f" {shown}" if shown else "")


def _case_reason(rec: dict[str, Any]) -> str:
    if rec.get("status") == "error":
        return f"ERROR: {rec.get('error') or rec.get('reason') or ''}"
    bad = [a for a in rec.get("assertions") or [] if not a.get("pass") or a.get("error")]
    reasons = [f"{a.get('type')}: {a.get('error') or a.get('reason')}" for a in bad]
    return "; ".join(reasons) or str(rec.get("reason") or "failed")


def error_commands(outcome: Any) -> list[str]:
    """One `::error` workflow command per test with a failing or erroring case, in test order."""
    titles: dict[int, str] = {}
    lines: dict[int, list[str]] = {}
    errors: Counter[int] = Counter()
    for rec in outcome.iter_results():
        if rec.get("status") != "pass":
            ti = int(rec.get("test_index") or 0)
            titles.setdefault(ti, str(rec.get("description") or f"tests[{ti}]"))
            lines.setdefault(ti, []).append(f"{_case_label(rec)}: {_case_reason(rec)}")
            errors[ti] += rec.get("status") == "error"
    locs = {t.index: t.loc for t in outcome.suite.tests if t.index in titles} if titles else {}  # one pass (streamed)
    out = []
    for ti in sorted(titles):
        failed, loc = len(lines[ti]) - errors[ti], locs.get(ti)
        props = []
        if loc is not None and loc.file:
            props.append(f"file={_escape_property(workspace_path(loc.file))}")
            if loc.line:
                props.append(f"line={loc.line}")
        counts = ", ".join(p for p in (f"{failed} failed" if failed else "",
                                       f"{errors[ti]} error{'s' if errors[ti] > 1 else ''}" if errors[ti] else "") if p)
        props.append(f"title={_escape_property(f'evalrun: {titles[ti]} ({counts})')}")
        message = cut("\n".join(lines[ti]), MESSAGE_MAX)
        out.append(f"::error {','.join(props)}::{_escape_data(message)}")
    return out


def step_summary(outcome: Any) -> str:
    """The job summary: totals, graders, pass rate per provider x prompt, and the failing cases."""
    s = outcome.summary
    grid: dict[tuple[str, str], list[int]] = {}
    failing: list[str] = []
    for rec in outcome.iter_results():
        key = (str(rec.get("provider")), str(rec.get("prompt_label")))
        counts = grid.setdefault(key, [0, 0, 0])
        status = rec.get("status")
        counts[0 if status == "pass" else 1 if status == "fail" else 2] += 1
        if status != "pass" and len(failing) < 50:
            name = rec.get("description") or f"tests[{int(rec.get('test_index') or 0)}]"
            failing.append(f"- **{md_cell(name)}** {md_cell(_case_label(rec))}: {md_cell(_case_reason(rec))[:300]}")
    title = outcome.suite.description or ", ".join(outcome.suite.files) or "evalrun"
    lines = [f"## evalrun: {md_cell(title)}", "", f"**{headline(s)}**"]
    if s.get("graders"):
        lines.append(f"Graded by {', '.join(md_cell(g) for g in s['graders'])}")
    lines += ["", "| provider | prompt | passed | failed | errors | pass rate |", "|---|---|---:|---:|---:|---:|"]
    for (prov, prompt), (p, f, e) in grid.items():
        lines.append(f"| {md_cell(prov)} | {md_cell(prompt)[:80]} | {p} | {f} | {e} | {100.0 * p / (p + f + e):.2f}% |")
    if failing:
        more = s["failed"] + s["errors"] - len(failing)
        lines += ["", "<details><summary>Failing cases</summary>", "", *failing]
        if more > 0:
            lines.append(f"- … and {more} more (see the results file)")
        lines += ["", "</details>"]
    return "\n".join(lines) + "\n"


def write_step_summary(outcome: Any) -> str | None:
    """Append the summary to $GITHUB_STEP_SUMMARY; returns the path written, or None when it is not set."""
    path = os.environ.get("GITHUB_STEP_SUMMARY")
    if not path:
        return None
    with open(path, "a", encoding="utf-8", errors="backslashreplace") as f:
        f.write(step_summary(outcome))
    return path
