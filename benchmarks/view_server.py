#!/usr/bin/env python3
"""`evalrun view` at scale: a run of 100,000 cases opened in the view.

    python benchmarks/view_server.py [--cases 100000]

Runs `evalrun eval` on the generated config of benchmarks/html_report.py (echo provider, 2 prompts, 2
assertions per case, one case in twenty failing), starts `evalrun view` on its folder, and times its JSON
answers: the runs list, the run's page data the first time (the server reads the whole results file) and
again, a page of cases with and without filters, an opened case; and the server's memory. The reference is the
least any reader of the file must do: parse every line (orjson, as evalrun's reader does), in this process.
With Debian's `chromium` installed it also opens the run's page headless (tests/browser.py) and times it until
its first 100 rows are drawn, then a status filter until the table shows the filtered rows.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from html_report import write_config  # noqa: E402


def rss_mb(pid: int) -> float:
    text = Path(f"/proc/{pid}/status").read_text()
    found = re.search(r"VmRSS:\s+(\d+) kB", text)
    return int(found.group(1)) / 1024 if found else float("nan")


def timed_get(url: str) -> tuple[float, object]:
    t0 = time.perf_counter()
    with urllib.request.urlopen(url, timeout=600) as resp:
        data = json.load(resp)
    return time.perf_counter() - t0, data


def parse_all(path: Path) -> float:
    from evalrun import jsonfast

    t0 = time.perf_counter()
    with open(path, "rb") as f:
        for line in f:
            jsonfast.loads(line)
    return time.perf_counter() - t0


def in_browser(url: str) -> dict[str, float] | None:
    from tests import browser

    if browser.find() is None:
        return None
    with browser.Browser.launch() as b:
        page = b.open(url, timeout=600)
        while True:  # the page's own clock: ms since its navigation started, when 100 rows are in the table
            rows, shown_ms = page.eval("[document.querySelectorAll('#rows tr.case').length, performance.now()]")
            if rows >= 100:
                break
            time.sleep(0.01)
        filter_ms = page.eval("""new Promise(done => { const t = performance.now();
            new MutationObserver((_, o) => { if (document.getElementById('count').textContent.startsWith('5000 of')) {
              o.disconnect(); done(performance.now() - t); } }).observe(document.getElementById('count'),
              {childList: true, characterData: true, subtree: true});
            const s = document.getElementById('st'); s.value = '1'; s.dispatchEvent(new Event('change')); })""")
        rows = page.eval("document.querySelectorAll('#rows tr.case').length")
        return {"shown_s": shown_ms / 1000, "filter_s": filter_ms / 1000, "rows": rows, "errors": len(page.errors)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", type=int, default=100_000)
    args = ap.parse_args()
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        cfg = write_config(folder, args.cases)
        subprocess.run([sys.executable, "-m", "evalrun", "eval", str(cfg), "--no-table", "--no-progress-bar",
                        "--no-cache"], env=env, capture_output=True, check=False)
        [results] = (folder / ".evalrun" / "runs").glob("*.jsonl")
        parse_s = parse_all(results)
        size_mb = results.stat().st_size / 1e6
        server = subprocess.Popen([sys.executable, "-m", "evalrun", "view", str(folder), "--port", "0"], env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        try:
            assert server.stdout is not None
            found = re.search(r"http://\S+/", server.stdout.readline())
            assert found, "evalrun view printed no address"
            base = found.group(0)
            rss0 = rss_mb(server.pid)
            list_s, runs = timed_get(base + "api/runs")
            run_id = runs["runs"][0]["id"]  # type: ignore[index]
            first_s, _ = timed_get(f"{base}api/runs/{run_id}")
            rss1 = rss_mb(server.pid)
            again_s, _ = timed_get(f"{base}api/runs/{run_id}")
            pages = {q: timed_get(f"{base}api/runs/{run_id}/cases?{q}")
                     for q in ("page=0", "st=1", "q=topic%2012", "page=500")}
            key = pages["st=1"][1]["items"][0]["key"]  # type: ignore[index]
            detail_s, _ = timed_get(f"{base}api/runs/{run_id}/cases/{key}")
            browser_times = in_browser(f"{base}#/run/{run_id}")
        finally:
            server.terminate()
            server.wait(30)
    print(f"cases: {args.cases:,}; results file {size_mb:.1f} MB")
    print(f"reference: parse every line of the results file: {parse_s:.2f} s")
    print(f"runs list: {list_s * 1000:.0f} ms")
    print(f"run page data, first time (reads the file): {first_s:.2f} s = {first_s / parse_s:.1f} x the reference")
    print(f"run page data, again: {again_s * 1000:.0f} ms")
    for q, (s, data) in pages.items():
        print(f"cases ?{q}: {s * 1000:.0f} ms ({data['matched']} matched, {len(data['items'])} sent)")  # type: ignore[index]
    print(f"one opened case: {detail_s * 1000:.0f} ms")
    print(f"server memory: {rss0:.0f} MB at start, {rss1:.0f} MB with the run read (+{rss1 - rss0:.0f} MB)")
    if browser_times is None:
        print("chromium: not installed, page not timed")
    else:
        print(f"chromium: first 100 rows drawn {browser_times['shown_s']:.2f} s after navigating (server warm), "
              f"~{first_s + browser_times['shown_s']:.1f} s the first time; "
              f"status filter {browser_times['filter_s'] * 1000:.0f} ms; rows in the DOM {browser_times['rows']}; "
              f"JS errors {browser_times['errors']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
