"""Run promptfoo-style configs through evalrun and promptfoo 0.121.20 and compare the verdicts case by case.

    python tests/compat/compare.py [CONFIG ...] [--promptfoo PATH] [--json]

Every config under tests/compat/configs/ uses the echo provider (the output is the rendered prompt), so the
two tools see identical outputs. A case matches when both give the same pass/fail; scores are compared too
and listed when they differ by more than 0.01 (informational). A case in DOCUMENTED differs on purpose (the
table in docs/config.md): it counts as a mismatch unless evalrun gives what that entry says. Exit status: 0 all
match, 1 a mismatch,
77 skipped (no `node` on PATH or no promptfoo install; set PROMPTFOO_BIN or pass --promptfoo).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
DEFAULT_PROMPTFOO = os.environ.get("PROMPTFOO_BIN", "/work/peer/node_modules/.bin/promptfoo")
SKIP = 77
#: (config, case description) -> evalrun's documented answer where it differs from promptfoo on purpose
#: (docs/config.md, "Differences from promptfoo"): "error" = the case is an ERROR where promptfoo passes it.
DOCUMENTED = {("edge.yaml", "not-javascript NaN"): "error"}


@dataclass
class Verdict:
    description: str
    passed: bool
    score: float | None
    error: str | None


def promptfoo_bin(explicit: str | None = None) -> str | None:
    """The promptfoo executable, or None when it (or node) is unavailable."""
    path = explicit or DEFAULT_PROMPTFOO
    if shutil.which("node") is None or not Path(path).exists():
        return None
    return path


def run_promptfoo(binary: str, config: Path, workdir: Path) -> dict[int, Verdict]:
    out = workdir / f"pf-{config.stem}.json"
    env = dict(os.environ, PROMPTFOO_DISABLE_TELEMETRY="1", PROMPTFOO_DISABLE_UPDATE="1",
               PROMPTFOO_DISABLE_SHARING="1", PROMPTFOO_CONFIG_DIR=str(workdir / "pf-home"),
               PROMPTFOO_DISABLE_REMOTE_GENERATION="1")
    subprocess.run([binary, "eval", "-c", str(config), "-o", str(out), "--no-cache", "--no-table",
                    "--no-progress-bar", "--no-write"], env=env, cwd=config.parent, capture_output=True,
                   text=True, timeout=300, check=False)
    data = json.loads(out.read_text())
    verdicts: dict[int, Verdict] = {}
    for r in data["results"]["results"]:
        desc = (r.get("testCase") or {}).get("description") or f"test {r['testIdx']}"
        verdicts[r["testIdx"]] = Verdict(desc, bool(r["success"]), r.get("score"), r.get("error"))
    return verdicts


def run_evalrun(config: Path, workdir: Path) -> dict[int, Verdict]:
    out = workdir / f"er-{config.stem}.json"
    done = subprocess.run([sys.executable, "-m", "evalrun", "eval", str(config), "-o", str(out), "--no-cache",
                           "--no-table", "--no-progress-bar", "--results-file",
                           str(workdir / f"er-{config.stem}.jsonl")],
                          cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    if not out.exists():
        raise RuntimeError(f"evalrun wrote no results for {config}: {done.stderr.strip()[-2000:]}")
    data = json.loads(out.read_text())
    return {r["test_index"]: Verdict(r.get("description") or f"test {r['test_index']}", bool(r["pass"]),
                                     r.get("score"), r.get("error"))
            for r in data["results"]}


def compare(configs: list[Path], binary: str) -> tuple[list[dict[str, Any]], int]:
    """Rows for every case and the number of pass/fail mismatches."""
    rows: list[dict[str, Any]] = []
    mismatches = 0
    with tempfile.TemporaryDirectory(prefix="evalrun-compat-") as tmp:
        work = Path(tmp)
        for cfg in configs:
            pf = run_promptfoo(binary, cfg, work)
            er = run_evalrun(cfg, work)
            for idx in sorted(set(pf) | set(er)):
                a, b = er.get(idx), pf.get(idx)
                same = a is not None and b is not None and a.passed == b.passed
                expected = DOCUMENTED.get((cfg.name, (a or b).description))  # type: ignore[union-attr]
                documented = expected == "error" and a is not None and a.error is not None and not a.passed
                mismatches += not (same or documented)
                score_diff = (a is not None and b is not None and a.score is not None and b.score is not None
                              and abs(a.score - b.score) > 0.01)
                rows.append({"config": cfg.name, "test": idx, "description": (a or b).description,  # type: ignore[union-attr]
                             "evalrun": None if a is None else a.passed,
                             "promptfoo": None if b is None else b.passed,
                             "evalrun_score": None if a is None else a.score,
                             "promptfoo_score": None if b is None else b.score,
                             "match": same, "documented": documented, "score_differs": score_diff})
    return rows, mismatches


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("configs", nargs="*", type=Path)
    ap.add_argument("--promptfoo", default=None, help="path of the promptfoo executable")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    binary = promptfoo_bin(args.promptfoo)
    if binary is None:
        print("skipped: node or promptfoo not available", file=sys.stderr)
        return SKIP
    configs = args.configs or sorted((HERE / "configs").glob("*.yaml"))
    rows, mismatches = compare([c.resolve() for c in configs], binary)
    if args.json:
        print(json.dumps({"cases": len(rows), "mismatches": mismatches, "rows": rows}, indent=2))
    else:
        for r in rows:
            mark = "ok  " if r["match"] else "doc " if r["documented"] else "DIFF"
            note = ""
            if r["score_differs"]:
                note = f"  (scores {r['evalrun_score']:.3f} vs {r['promptfoo_score']:.3f})"
            print(f"{mark} {r['config']:<16} {r['description']:<36} evalrun={r['evalrun']!s:<5} "
                  f"promptfoo={r['promptfoo']!s:<5}{note}")
        print(f"{len(rows)} cases, {mismatches} pass/fail mismatches "
              f"({sum(r['documented'] for r in rows)} documented differences)")
    return 1 if mismatches else 0


if __name__ == "__main__":
    raise SystemExit(main())
