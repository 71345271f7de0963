"""`.xml`: JUnit XML for CI systems. One <testcase> per case; a failed case has <failure>, an errored case
has <error> (CI shows them apart), each with the failing assertions' reasons."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape, quoteattr

_BAD_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _clean(text: Any) -> str:
    return _BAD_XML.sub("", str(text if text is not None else ""))


def _attr(text: Any) -> str:
    return quoteattr(_clean(text))


def _name(rec: dict[str, Any]) -> str:
    label = rec.get("description") or ", ".join(f"{k}={v}" for k, v in (rec.get("vars") or {}).items())
    label = " ".join(str(label).split())[:120]
    return f"{label} [{rec.get('prompt_label')}]" + (f" #{rec['repeat']}" if rec.get("repeat") else "")


def _details(rec: dict[str, Any]) -> str:
    lines = []
    for a in rec.get("assertions") or []:
        if a.get("error") or not a.get("pass"):
            mark = "ERROR" if a.get("error") else "FAIL"
            score = a.get("score")
            lines.append(f"{mark} {a.get('type')}" + (f" (score {score:.3g})" if isinstance(score, float) else "")
                         + f": {a.get('error') or a.get('reason') or ''}")
    if rec.get("output") is not None:
        lines.append(f"output: {str(rec.get('output'))[:2000]}")
    return escape(_clean("\n".join(lines)))


def write(path: Path, outcome: Any) -> None:
    s = outcome.summary
    name = outcome.meta().get("description") or "evalrun"
    with open(path, "w", encoding="utf-8", errors="backslashreplace") as f:
        f.write('<?xml version="1.0" encoding="UTF-8"?>\n')
        counts = f'tests="{s["total"]}" failures="{s["failed"]}" errors="{s["errors"]}" time="{s["duration_s"]}"'
        f.write(f"<testsuites name={_attr(name)} {counts}>\n")
        f.write(f"  <testsuite name={_attr(name)} {counts} timestamp={_attr(s['started_at'])}>\n")
        for rec in outcome.iter_results():
            secs = float(rec.get("latency_ms") or 0.0) / 1000.0
            f.write(f"    <testcase classname={_attr(rec.get('provider'))} name={_attr(_name(rec))} "
                    f'time="{secs:.3f}"')
            status = rec.get("status")
            if status == "pass":
                f.write("/>\n")
                continue
            tag = "failure" if status == "fail" else "error"
            message = rec.get("error") if tag == "error" else rec.get("reason")
            f.write(f">\n      <{tag} message={_attr(str(message or '')[:500])} type={_attr(status)}>"
                    f"{_details(rec)}</{tag}>\n    </testcase>\n")
        f.write("  </testsuite>\n</testsuites>\n")
