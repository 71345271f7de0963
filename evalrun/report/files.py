"""The file reports besides HTML (.json, .jsonl, .csv, JUnit .xml), each streamed from the results file."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from evalrun.run.store import RESULTS_VERSION

CSV_COLUMNS = ["id", "index", "description", "provider", "prompt_label", "vars", "output", "status", "pass",
               "score", "reason", "error", "latency_ms", "cached", "tokens_total", "cost", "assertions"]
_BAD_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


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


def mark(a: dict[str, Any]) -> str:
    """An assertion result's verdict: PASS, FAIL or ERROR."""
    return "ERROR" if a.get("error") else ("PASS" if a.get("pass") else "FAIL")


def write_csv(path: Path, outcome: Any) -> None:
    with open(path, "w", encoding="utf-8", errors="backslashreplace", newline="") as f:
        w = csv.writer(f)
        w.writerow(CSV_COLUMNS)
        for rec in outcome.iter_results():
            asserts = "\n".join(f"{a.get('type')}: {mark(a)} {a.get('reason') or ''}".strip()
                                for a in rec.get("assertions") or [])
            w.writerow([rec.get("id"), rec.get("index"), rec.get("description") or "", rec.get("provider"),
                        rec.get("prompt_label"), json.dumps(rec.get("vars") or {}, ensure_ascii=False, default=str),
                        rec.get("output") or "", rec.get("status"), rec.get("pass"), rec.get("score"),
                        rec.get("reason") or "", rec.get("error") or "", rec.get("latency_ms"), rec.get("cached"),
                        (rec.get("tokens") or {}).get("total", 0), rec.get("cost"), asserts])


def _clean(text: Any) -> str:
    return _BAD_XML.sub("", str(text if text is not None else ""))


def _attr(text: Any) -> str:
    return quoteattr(_clean(text))


def _junit_name(rec: dict[str, Any]) -> str:
    label = rec.get("description") or ", ".join(f"{k}={v}" for k, v in (rec.get("vars") or {}).items())
    label = " ".join(str(label).split())[:120]
    return f"{label} [{rec.get('prompt_label')}]" + (f" #{rec['repeat']}" if rec.get("repeat") else "")


def _junit_details(rec: dict[str, Any]) -> str:
    lines = []
    for a in rec.get("assertions") or []:
        if a.get("error") or not a.get("pass"):
            score = a.get("score")
            lines.append(f"{mark(a)} {a.get('type')}" + (f" (score {score:.3g})" if isinstance(score, float) else "")
                         + f": {a.get('error') or a.get('reason') or ''}")
    if rec.get("output") is not None:
        lines.append(f"output: {str(rec.get('output'))[:2000]}")
    return escape(_clean("\n".join(lines)))


def write_junit(path: Path, outcome: Any) -> None:
    s = outcome.summary
    name = outcome.meta().get("description") or "evalrun"
    with open(path, "w", encoding="utf-8", errors="backslashreplace") as f:
        f.write('<?xml version="1.0" encoding="UTF-8"?>\n')
        counts = f'tests="{s["total"]}" failures="{s["failed"]}" errors="{s["errors"]}" time="{s["duration_s"]}"'
        f.write(f"<testsuites name={_attr(name)} {counts}>\n")
        f.write(f"  <testsuite name={_attr(name)} {counts} timestamp={_attr(s['started_at'])}>\n")
        for rec in outcome.iter_results():
            secs = float(rec.get("latency_ms") or 0.0) / 1000.0
            f.write(f"    <testcase classname={_attr(rec.get('provider'))} name={_attr(_junit_name(rec))} "
                    f'time="{secs:.3f}"')
            status = rec.get("status")
            if status == "pass":
                f.write("/>\n")
                continue
            tag = "failure" if status == "fail" else "error"
            message = rec.get("error") if tag == "error" else rec.get("reason")
            f.write(f">\n      <{tag} message={_attr(str(message or '')[:500])} type={_attr(status)}>"
                    f"{_junit_details(rec)}</{tag}>\n    </testcase>\n")
        f.write("  </testsuite>\n</testsuites>\n")
