"""Clean stops: SIGTERM like Ctrl-C (exit 143), stdout closed early (`| head -1`), --debug keeps exit 2,
`evalrun report` rebuilds reports from a results file."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
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


def _wait_for(ready: Callable[[], bool], what: str, proc: subprocess.Popen[str], timeout: float = 120) -> None:
    """Until `ready()` (polled), however slow the machine; fails if the process ended or it never happened."""
    deadline = time.monotonic() + timeout
    while not ready():
        assert proc.poll() is None, f"evalrun ended (exit {proc.returncode}) before {what}: {proc.communicate()}"
        assert time.monotonic() < deadline, f"no {what} within {timeout:.0f} s"
        time.sleep(0.05)


def _has_results(path: Path, n: int = 1) -> Callable[[], bool]:
    return lambda: path.exists() and len(path.read_bytes().splitlines()) >= n


def test_sigterm_stops_like_ctrl_c_with_summary_and_reports(tmp_path: Path) -> None:
    cfg = _slow_suite(tmp_path)
    cmd = [sys.executable, "-m", "evalrun", "eval", cfg, "--no-table", "--no-progress-bar", "-j", "2",
           "-o", "out.json", "-o", "out.xml"]
    proc = subprocess.Popen(cmd, cwd=tmp_path, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    results = tmp_path / ".evalrun" / "last-run.jsonl"
    _wait_for(_has_results(results), "first result", proc)  # the run is under way: its handlers are set
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    assert "Interrupted" in out and "Traceback" not in err
    done = len(results.read_text().splitlines())
    assert 0 < done < 200
    report = json.loads((tmp_path / "out.json").read_text())
    assert report["summary"]["interrupted"] is True and len(report["results"]) == done
    assert (tmp_path / "out.xml").read_text().startswith("<?xml")


def test_sigterm_stops_a_run_that_ignores_ctrl_c(tmp_path: Path) -> None:
    """A shell script's background job (`evalrun eval &`) starts with SIGINT ignored: Ctrl-C stays ignored,
    and SIGTERM (what `kill` and CI cancellation send) still stops the run with its summary, exit 143."""
    cfg = _slow_suite(tmp_path, n=400)
    ignoring = ("import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_IGN); "
                "os.execv(sys.executable, [sys.executable, '-m', 'evalrun', *sys.argv[1:]])")
    proc = subprocess.Popen([sys.executable, "-c", ignoring, "eval", cfg, "--no-table", "--no-progress-bar",
                             "-j", "2", "-o", "out.json"], cwd=tmp_path, env=_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    results = tmp_path / ".evalrun" / "last-run.jsonl"
    _wait_for(_has_results(results), "first result", proc)
    proc.send_signal(signal.SIGINT)
    seen = len(results.read_bytes().splitlines())
    _wait_for(_has_results(results, seen + 10), "results after the ignored Ctrl-C", proc)  # the run went on
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    assert "Interrupted" in out and "Traceback" not in err
    done = len(results.read_text().splitlines())
    assert seen + 10 <= done < 400
    assert json.loads((tmp_path / "out.json").read_text())["summary"]["interrupted"] is True


def test_ctrl_c_while_the_config_loads_exits_130_without_traceback(tmp_path: Path) -> None:
    """Before the run (imports, config, user code loading) Ctrl-C ends evalrun at once: exit 130, one line.
    A KeyboardInterrupt there would surface as a config error blaming the user's file (exit 2), a traceback,
    or a crash inside a C extension's import."""
    (tmp_path / "check.py").write_text("import pathlib, time\npathlib.Path('loading').write_text('')\n"
                                       "time.sleep(60)\ndef get_assert(output, context):\n    return True\n")
    (tmp_path / "evalrun.yaml").write_text("providers: [echo]\nprompts: ['{{q}}']\ntests:\n  - vars: {q: a}\n"
                                           "    assert: [{type: python, value: file://check.py}]\n")
    proc = subprocess.Popen([sys.executable, "-m", "evalrun", "eval", "--no-progress-bar"], cwd=tmp_path,
                            env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _wait_for((tmp_path / "loading").exists, "config loading the user's file", proc)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)  # at once: not after the file's 60 s import
    assert (proc.returncode, err, out) == (130, "evalrun: interrupted\n", "")
    assert not (tmp_path / ".evalrun").exists()  # no run was started


def test_the_command_line_gives_ctrl_c_back_as_it_found_it(tmp_path: Path) -> None:
    """main() called in a process (tests, a wrapper) leaves no handler of its own behind, nor one that exits."""
    path = tmp_path / "c.yaml"
    path.write_text("prompts: [x]\nproviders: [echo]\ntests:\n  - vars: {x: 1}\n")
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    assert main(["validate", str(path)]) == 0
    assert main(["eval", str(path), "--no-progress-bar", "--no-history", "--results-file", str(tmp_path / "r")]) == 0
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


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
    assert main(["report", str(results), "-o", str(tmp_path / "r.docx")]) == 2
