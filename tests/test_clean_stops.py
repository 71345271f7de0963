"""Clean stops: SIGTERM like Ctrl-C (exit 143), stdout closed early (`| head -1`), --debug keeps exit 2,
`evalrun report` rebuilds reports from a results file."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from evalrun.cli import main

ROOT = Path(__file__).resolve().parent.parent


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("CI", None)
    env["PYTHONPATH"] = str(ROOT)
    return env


def _slow_suite(tmp_path: Path, n: int = 200) -> str:
    (tmp_path / "prov.py").write_text("import time\ndef call_api(prompt, options, context):\n"
                                      "    time.sleep(0.05)\n    return prompt\n")
    values = ", ".join(f"v{i}" for i in range(n))
    path = tmp_path / "evalrun.yaml"
    path.write_text(f"providers: [file://prov.py]\nprompts: ['{{{{q}}}}']\ntests:\n  - vars: {{q: [{values}]}}\n")
    return str(path)


def test_sigterm_stops_like_ctrl_c_with_summary_and_reports(tmp_path: Path) -> None:
    cfg = _slow_suite(tmp_path)
    cmd = [sys.executable, "-m", "evalrun", "eval", cfg, "--no-table", "--no-progress-bar", "-j", "2",
           "-o", "out.json", "-o", "out.xml"]
    proc = subprocess.Popen(cmd, cwd=tmp_path, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    results = tmp_path / ".evalrun" / "last-run.jsonl"
    deadline = time.time() + 30
    while time.time() < deadline and (not results.exists() or results.stat().st_size == 0):
        time.sleep(0.05)
    time.sleep(0.3)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 143, err
    assert "Interrupted" in out and "Traceback" not in err
    done = len(results.read_text().splitlines())
    assert 0 < done < 200
    report = json.loads((tmp_path / "out.json").read_text())
    assert report["summary"]["interrupted"] is True and len(report["results"]) == done
    assert (tmp_path / "out.xml").read_text().startswith("<?xml")


def test_stdout_closed_early_exits_quietly(tmp_path: Path) -> None:
    cfg = _slow_suite(tmp_path, n=400)
    (tmp_path / "prov.py").write_text("def call_api(prompt, options, context):\n    return prompt\n")
    proc = subprocess.Popen([sys.executable, "-m", "evalrun", "eval", cfg, "--no-progress-bar", "-o", "r.json"],
                            cwd=tmp_path, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.readline()  # what `| head -1` reads, then closes the pipe
    proc.stdout.close()
    err = proc.stderr.read().decode()
    proc.wait(timeout=60)
    assert "Traceback" not in err and "BrokenPipe" not in err, err
    assert proc.returncode == 0
    assert len(json.loads((tmp_path / "r.json").read_text())["results"]) == 400  # the run went on


def test_debug_keeps_exit_code_2_for_config_errors(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "c.yaml"
    path.write_text("prompts: [x]\nproviders: [echo]\ntests:\n  - vars: {x: 1}\n    assert: [{type: nope}]\n")
    assert main(["validate", "--debug", str(path)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" in err and "c.yaml:5" in err


def test_report_rebuilds_every_format_from_the_results_file(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    cfg = tmp_path / "c.yaml"
    cfg.write_text("prompts: ['{{x}}']\nproviders: [echo]\ntests:\n  - vars: {x: [a, b, c]}\n"
                   "    assert: [{type: equals, value: a}]\n")
    results = tmp_path / "run.jsonl"
    assert main(["eval", str(cfg), "--no-progress-bar", "--results-file", str(results),
                 "-o", str(tmp_path / "direct.json")]) == 100
    with results.open("a") as f:  # a resumed run can write a case twice, and a SIGKILL can tear the tail
        f.write(results.read_text().splitlines()[0] + "\n" + '{"id": "torn')
    outs = [str(tmp_path / f"r{ext}") for ext in (".json", ".jsonl", ".csv", ".xml", ".html")]
    assert main(["report", str(results), *sum((["-o", o] for o in outs), [])]) == 0
    rebuilt = json.loads(Path(outs[0]).read_text())
    direct = json.loads((tmp_path / "direct.json").read_text())
    assert rebuilt["summary"]["total"] == 3 and rebuilt["summary"]["passed"] == 1
    assert [r["id"] for r in rebuilt["results"]] == [r["id"] for r in direct["results"]]
    assert len(Path(outs[1]).read_text().splitlines()) == 3
    assert "<testsuite" in Path(outs[3]).read_text() and Path(outs[4]).stat().st_size > 1000
    assert main(["report", str(tmp_path / "missing.jsonl"), "-o", outs[0]]) == 2
    assert main(["report", str(results), "-o", str(tmp_path / "r.txt")]) == 2
