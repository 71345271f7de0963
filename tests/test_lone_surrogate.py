"""A lone surrogate in a test's JSON ("\\ud800", which JSON allows and json.loads reads) runs like any other text:
the run finishes, the case has its verdict, every report is written and the results read back as written."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def test_lone_surrogate_var_runs_and_reports(tmp_path: Path) -> None:
    (tmp_path / "t.jsonl").write_text(
        '{"vars": {"q": "x\\ud800y"}, "assert": [{"type": "contains", "value": "x"}]}\n'
        '{"vars": {"q": "fine"}, "assert": [{"type": "contains", "value": "nope"}]}\n', encoding="utf-8")
    (tmp_path / "c.yaml").write_text('providers: [echo]\nprompts: ["{{q}}"]\ntests: file://t.jsonl\n')
    outs = ["out.html", "out.json", "out.csv", "out.xml", "out.jsonl"]
    proc = subprocess.run([sys.executable, "-m", "evalrun", "eval", "c.yaml", "--no-progress-bar",
                           "--results-file", "r.jsonl", *(a for o in outs for a in ("-o", o))],
                          cwd=tmp_path, capture_output=True, text=True, errors="replace")
    assert proc.returncode == 100, proc.stderr  # one case fails on purpose (exit 100): the run reached its verdicts
    assert "Traceback" not in proc.stderr
    records = [json.loads(line) for line in (tmp_path / "r.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [(r["status"], r["output"]) for r in records] == [("pass", "x\ud800y"), ("fail", "fine")]
    assert json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))["results"][0]["output"] == "x\ud800y"
    for name in outs:
        assert (tmp_path / name).stat().st_size > 0
