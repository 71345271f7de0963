"""Two `evalrun eval` runs in the same folder at once: each has its own results file, both finish cleanly.

Before each run had its own file, both appended to `.evalrun/last-run.jsonl`: the second run truncated it
while the first was still writing, and the first died in its report with a JSONDecodeError traceback and a
cut-off `-o` file.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("CI", None)
    env["PYTHONPATH"] = str(ROOT)
    return env


def test_two_runs_at_once_do_not_break_each_other(tmp_path: Path) -> None:
    (tmp_path / "prov.py").write_text("import time\ndef call_api(prompt, options, context):\n"
                                      "    time.sleep(0.01)\n    return prompt\n")
    values = ", ".join(f"v{i}" for i in range(150))
    (tmp_path / "evalrun.yaml").write_text(
        "providers: [file://prov.py]\nprompts: ['{{q}}']\n"
        f"tests:\n  - vars: {{q: [{values}]}}\n    assert: [{{type: contains, value: v}}]\n")
    base = [sys.executable, "-m", "evalrun", "eval", "evalrun.yaml", "--no-table", "--no-progress-bar", "-j", "1"]
    first = subprocess.Popen(base + ["-o", "a.json"], cwd=tmp_path, env=_env(), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    runs = tmp_path / ".evalrun"
    deadline = time.time() + 30
    while time.time() < deadline and not any(p.stat().st_size for p in runs.rglob("*.jsonl") if p.is_file()):
        time.sleep(0.02)
    second = subprocess.run(base + ["-o", "b.json", "-j", "4"], cwd=tmp_path, env=_env(), capture_output=True,
                            text=True, timeout=120)
    out, err = first.communicate(timeout=120)
    assert first.returncode == 0, err
    assert second.returncode == 0, second.stderr
    assert "Traceback" not in err + second.stderr
    for name in ("a.json", "b.json"):
        data = json.loads((tmp_path / name).read_text())
        assert data["summary"]["total"] == 150 and len(data["results"]) == 150
        assert sorted(r["vars"]["q"] for r in data["results"]) == sorted(f"v{i}" for i in range(150))
    a_file = json.loads((tmp_path / "a.json").read_text())["meta"]["results_file"]
    b_file = json.loads((tmp_path / "b.json").read_text())["meta"]["results_file"]
    assert a_file != b_file
    assert len(Path(tmp_path / a_file).read_text().splitlines()) == 150
    from evalrun.run.history import History

    rows = History(runs).list()  # both runs recorded, each with its own file (SQLite WAL, no lock-out)
    assert sorted(r.status for r in rows) == ["finished", "finished"]
    assert {str(r.results_file) for r in rows} == {a_file, b_file}
