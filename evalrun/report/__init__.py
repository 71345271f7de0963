"""A run's reports besides the console's: files by extension (.json .jsonl .csv, JUnit .xml; .html in html.py),
streamed from the results file, and GitHub Actions' `::error` annotations and Markdown job summary."""

from __future__ import annotations

import csv
import importlib
import json
import os
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from evalrun.errors import UsageError
from evalrun.report.console import case_label, cut, failure_text, headline, mark, md_cell, shorten, vars_text
from evalrun.run.store import RESULTS_VERSION

CSV_COLUMNS = ["id", "index", "description", "provider", "prompt_label", "vars", "output", "status", "pass",
               "score", "reason", "error", "latency_ms", "cached", "tokens_total", "cost", "assertions"]
MESSAGE_MAX = 4000  # characters of a GitHub annotation
_BAD_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def check_path(path: str) -> None:
    """UsageError unless the extension names a known format (checked before the run starts)."""
    if Path(path).suffix.lower() not in FORMATS:
        raise UsageError(f"unknown output format for {path!r}", key="--output",
                         hint=f"use one of the extensions {', '.join(FORMATS)}")


def write(path: str, outcome: Any) -> None:
    check_path(path)
    p = Path(path)
    writer = FORMATS[p.suffix.lower()]
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        if writer is None:  # the HTML page's module is imported only when one is written
            writer = importlib.import_module("evalrun.report.html").write
        writer(p, outcome)
    except OSError as e:
        raise UsageError(f"cannot write {path!r}: {e.strerror or e}", key="--output",
                         hint=f"the results are also in {outcome.results_file}") from None


def _dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, default=str)


def write_json(path: Path, outcome: Any) -> None:
    with open(path, "w", encoding="utf-8", errors="backslashreplace") as f:
        head = {"version": RESULTS_VERSION, "meta": outcome.meta(), "summary": outcome.summary}
        text = json.dumps(head, ensure_ascii=False, indent=2, default=str)
        f.write(text[:-2] + ',\n  "results": [')
        for i, rec in enumerate(outcome.iter_results()):
            f.write(("\n    " if i == 0 else ",\n    ") + _dumps(rec))
        f.write("\n  ]")
        repeats = getattr(outcome, "repeats", None)
        if repeats is not None:  # --repeat N > 1: pass rate, intervals and flakiness per repeated case
            f.write(',\n  "repeat_stats": ' + _dumps([g.as_dict() for g in repeats.groups]))
        f.write("\n}\n")


def write_yaml(path: Path, outcome: Any) -> None:
    """The .json report's content as YAML (promptfoo writes .yaml, .yml and .txt alike, as YAML), a case at a time."""
    import yaml

    def dump(obj: Any) -> str:  # JSON's types only (a datetime, a path: text, as in the .json report)
        return yaml.safe_dump(json.loads(_dumps(obj)), allow_unicode=True, sort_keys=False, width=120)

    with open(path, "w", encoding="utf-8", errors="backslashreplace") as f:
        f.write(dump({"version": RESULTS_VERSION, "meta": outcome.meta(), "summary": outcome.summary}))
        f.write("results:\n")
        n = 0
        for rec in outcome.iter_results():
            f.write(dump([rec]))
            n += 1
        if n == 0:
            f.write("  []\n")
        repeats = getattr(outcome, "repeats", None)
        if repeats is not None:
            f.write(dump({"repeat_stats": [g.as_dict() for g in repeats.groups]}))


def write_jsonl(path: Path, outcome: Any) -> None:
    with open(path, "w", encoding="utf-8", errors="backslashreplace") as f:
        for rec in outcome.iter_results():
            f.write(_dumps(rec) + "\n")


def write_csv(path: Path, outcome: Any) -> None:
    with open(path, "w", encoding="utf-8", errors="backslashreplace", newline="") as f:
        w = csv.DictWriter(f, CSV_COLUMNS, extrasaction="ignore")  # None is written as an empty field
        w.writeheader()
        for rec in outcome.iter_results():
            asserts = "\n".join(f"{a.get('type')}: {mark(a)} {a.get('reason') or ''}".strip()
                                for a in rec.get("assertions") or [])
            w.writerow({**rec, "vars": _dumps(rec.get("vars") or {}), "assertions": asserts,
                        "tokens_total": (rec.get("tokens") or {}).get("total", 0)})


def _attr(text: Any) -> str:
    return quoteattr(_BAD_XML.sub("", str(text or "")))


def write_junit(path: Path, outcome: Any) -> None:
    """One testcase per case (classname: its provider); a failure or error element carries `failure_text`."""
    s = outcome.summary
    name = outcome.meta().get("description") or "evalrun"
    with open(path, "w", encoding="utf-8", errors="backslashreplace") as f:
        f.write('<?xml version="1.0" encoding="UTF-8"?>\n')
        counts = f'tests="{s["total"]}" failures="{s["failed"]}" errors="{s["errors"]}" time="{s["duration_s"]}"'
        f.write(f"<testsuites name={_attr(name)} {counts}>\n")
        f.write(f"  <testsuite name={_attr(name)} {counts} timestamp={_attr(s['started_at'])}>\n")
        for rec in outcome.iter_results():
            label = f"{case_label(rec, 120)} [{rec.get('prompt_label')}]" + \
                (f" #{rec['repeat']}" if rec.get("repeat") else "")
            f.write(f"    <testcase classname={_attr(rec.get('provider'))} name={_attr(label)} "
                    f'time="{float(rec.get("latency_ms") or 0.0) / 1000.0:.3f}"')
            status = rec.get("status")
            if status == "pass":
                f.write("/>\n")
                continue
            tag = "failure" if status == "fail" else "error"
            message = str((rec.get("error") if tag == "error" else rec.get("reason")) or "")[:500]
            details = escape(_BAD_XML.sub("", failure_text(rec, show_provider=False)))
            f.write(f">\n      <{tag} message={_attr(message)} type={_attr(status)}>{details}</{tag}>\n"
                    "    </testcase>\n")
        f.write("  </testsuite>\n</testsuites>\n")


#: Extension -> its writer (None: the HTML page, html.write).
FORMATS: dict[str, Callable[[Path, Any], None] | None] = {
    ".json": write_json, ".jsonl": write_jsonl, ".csv": write_csv, ".xml": write_junit, ".html": None,
    ".yaml": write_yaml, ".yml": write_yaml, ".txt": write_yaml}


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def workspace_path(file: str) -> str:
    """`file` relative to GITHUB_WORKSPACE when it lies inside it, else as given (POSIX separators)."""
    path, ws = Path(file), os.environ.get("GITHUB_WORKSPACE")
    if ws and path.resolve().is_relative_to(Path(ws).resolve()):
        return path.resolve().relative_to(Path(ws).resolve()).as_posix()
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
        loc = locs.get(ti)
        props = []
        if loc is not None and loc.file:
            props = [f"file={_escape_property(workspace_path(loc.file))}", *([f"line={loc.line}"] if loc.line else [])]
        failed, erred = len(lines[ti]) - errors[ti], errors[ti]
        counts = ", ".join(([f"{failed} failed"] if failed else [])
                           + ([f"{erred} error{'s' if erred > 1 else ''}"] if erred else []))
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


def write_step_summary(outcome: Any) -> None:
    path = os.environ.get("GITHUB_STEP_SUMMARY")
    if path:
        with open(path, "a", encoding="utf-8", errors="backslashreplace") as f:
            f.write(step_summary(outcome))
