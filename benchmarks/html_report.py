#!/usr/bin/env python3
"""HTML report at scale: file size and load time of `-o report.html` for 100,000 cases.

    python benchmarks/html_report.py [--cases 100000]

Runs `evalrun eval` (echo provider, 2 prompts, tests whose var lists 10 values, 2 assertions per case, one
case in twenty failing) writing `report.html` and `report.json`, then reports the HTML file's size against the
.json report of the same run (the full results, the reference for "all the data") and the run's JSONL results
file. With Debian's `chromium` installed it also opens the page headless (tests/browser.py) and reports the
page's own load time, the time to filter every case by status, and the rows in the DOM (one page of 100).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def write_config(folder: Path, n: int) -> Path:
    per_test, prompts = 10, 2
    lines = ["description: html report benchmark", "providers: [echo]",
             "prompts: ['Answer {{question}} about {{topic}}', {label: short, raw: 'Q: {{question}}'}]", "tests:"]
    for i in range(n // (per_test * prompts)):
        values = ", ".join(f"'question number {i}-{j}'" for j in range(per_test))
        lines += [f"  - description: test {i}", f"    vars: {{question: [{values}], topic: 'topic {i % 17}'}}",
                  "    assert:", "      - {type: contains, value: 'number'}",
                  "      - {type: not-contains, value: '-9 '}"]
    path = folder / "evalrun.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


def mb(n: int) -> str:
    return f"{n / 1e6:.1f} MB"


def browser_time(html: Path) -> dict[str, float] | None:
    """Open the page in headless Chromium (tests/browser.py, DevTools over a pipe): load time as the page
    measures it, time to filter all cases by status, rows in the DOM; None without Chromium."""
    sys.path.insert(0, str(ROOT))
    from tests import browser

    if browser.find() is None:
        return None
    with browser.Browser.launch() as b:
        page = b.open(html.as_uri(), timeout=600)
        load_ms = page.eval("performance.getEntriesByType('navigation')[0].duration")
        filter_ms = page.eval("(() => { const t = performance.now(); const s = document.getElementById('st');"
                              " s.value = '1'; s.dispatchEvent(new Event('change')); return performance.now() - t; })()")
        rows = page.eval("document.querySelectorAll('#rows tr.case').length")
        errors = len(page.errors)
    return {"load_s": load_ms / 1000, "filter_ms": filter_ms, "rows": rows, "errors": errors}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", type=int, default=100_000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        cfg = write_config(folder, args.cases)
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        cmd = [sys.executable, "-m", "evalrun", "eval", str(cfg), "--no-table", "--no-progress-bar", "--no-history",
               "--no-cache", "--results-file", str(folder / "r.jsonl"), "-o", str(folder / "report.json")]
        t0 = time.perf_counter()
        subprocess.run(cmd, env=env, capture_output=True, check=False)
        run_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        subprocess.run(cmd[:-2] + ["-o", str(folder / "report.html")], env=env, capture_output=True, check=False)
        html_run_s = time.perf_counter() - t0
        html, js, jl = (folder / n for n in ("report.html", "report.json", "r.jsonl"))
        print(f"cases: {args.cases:,}")
        print(f"run + .json report: {run_s:.1f} s; run + .html report: {html_run_s:.1f} s")
        print(f"report.html {mb(html.stat().st_size)}; report.json {mb(js.stat().st_size)}; results .jsonl "
              f"{mb(jl.stat().st_size)}; html / json = {html.stat().st_size / js.stat().st_size:.2f}")
        timed = browser_time(html)
        if timed is None:
            print("chromium not installed: no load time (apt-get install -y chromium)")
        else:
            print(f"headless chromium: page loaded (parse + script + first page of the table) in "
                  f"{timed['load_s']:.1f} s; filtering all cases by status {timed['filter_ms']:.0f} ms; "
                  f"table rows in the DOM {timed['rows']:.0f} (one page); JS errors {timed['errors']:.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
