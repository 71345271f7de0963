"""Report files of a run, by extension: .json, .jsonl, .csv, JUnit .xml (here) and .html (html.py), each streamed
from the results file in expansion order, so formats cannot disagree and memory stays flat."""

from __future__ import annotations

import csv
import importlib
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from evalrun.errors import UsageError
from evalrun.report.console import case_label, failure_text, mark
from evalrun.run.serialize import RESULTS_VERSION

CSV_COLUMNS = ["id", "index", "description", "provider", "prompt_label", "vars", "output", "status", "pass",
               "score", "reason", "error", "latency_ms", "cached", "tokens_total", "cost", "assertions"]
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
    ".json": write_json, ".jsonl": write_jsonl, ".csv": write_csv, ".xml": write_junit, ".html": None}
