"""`evalrun eval`'s promptfoo options give promptfoo 0.121.20's selection on the same suite (tests/compat/cli/):
the same (test, provider, prompt) cases with the same verdicts and outputs. The expected cases were recorded from
promptfoo 0.121.20 (`python -m tests.compat.test_cli_options --record`, into cli/recorded.json); when promptfoo is
installed (tests/compat/compare.py: PROMPTFOO_BIN) they are also taken from it live."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.compat.compare import promptfoo_bin

HERE = Path(__file__).parent / "cli"
RECORDED = HERE / "recorded.json"

#: name -> the options (the same for both tools); "config": False runs without -c suite.yaml, "suite" names another
#: config; with "previous", each tool first runs the suite alone and {PREVIOUS} in the options is its own report
CASES: dict[str, dict[str, Any]] = {
    "filter-metadata": {"args": ["--filter-metadata", "team=red"]},
    "filter-metadata-and": {"args": ["--filter-metadata", "team=red", "--filter-metadata", "env=prod"]},
    "filter-range": {"args": ["--filter-range", "1:3"]},
    "filter-range-open": {"args": ["--filter-range", "2:"]},
    "filter-sample-seed": {"args": ["--filter-sample", "2", "--filter-sample-seed", "42"]},
    "filter-sample-seed-7": {"args": ["--filter-sample", "3", "--filter-sample-seed", "7"]},
    "filter-prompts": {"args": ["--filter-prompts", "^bye$"]},
    "filter-providers": {"args": ["--filter-providers", "two"]},
    "filter-targets": {"args": ["--filter-targets", "two"]},
    "prompt-prefix-suffix": {"args": ["--prompt-prefix", "PRE ", "--prompt-suffix", " POST"]},
    "prompts": {"args": ["-c", "suite.yaml", "-p", "extra.txt"], "config": False},
    "providers": {"args": ["-c", "suite.yaml", "-r", "echo-two"], "config": False},
    "tests": {"args": ["-c", "suite.yaml", "-t", "tests.csv"], "config": False},
    "assertions": {"args": ["-a", "assertions.yaml", "--model-outputs", "outputs.json"], "config": False},
    # the report's format: promptfoo writes .yaml and .txt alike, as YAML of its JSON output (read back here)
    "output-yaml": {"args": ["--filter-range", ":1"], "ext": ".yaml"},
    "output-txt": {"args": ["--filter-range", ":1"], "ext": ".txt"},
    # envsuite.yaml renders {{env.CLI_TEAM}}: a later file wins. (promptfoo 0.121.20 means a comma list too, but its
    # launcher hands `--env-file a,b` to Node.js 20, which refuses it: tests/test_eval_cli_options.py covers it)
    "env-file": {"args": ["--env-file", "one.env"], "suite": "envsuite.yaml"},
    "env-file-repeated": {"args": ["--env-file", "one.env", "--env-file", "two.env"], "suite": "envsuite.yaml"},
    # tests/compat/cli/flaky.yaml: one test fails its assertion, one errors (its provider fails) in every cell
    "filter-failing-only": {"args": ["--filter-failing-only", "{PREVIOUS}"], "suite": "flaky.yaml", "previous": True},
    "filter-errors-only": {"args": ["--filter-errors-only", "{PREVIOUS}"], "suite": "flaky.yaml", "previous": True},
    "filter-failing": {"args": ["--filter-failing", "{PREVIOUS}"], "suite": "flaky.yaml", "previous": True},
    "filter-failing-and-errors-only": {"args": ["--filter-failing-only", "{PREVIOUS}", "--filter-errors-only",
                                                "{PREVIOUS}"], "suite": "flaky.yaml", "previous": True},
}


def _key(vars: Any, provider: Any, output: Any, success: Any) -> list[Any]:
    """A case by what both tools agree on: its vars, its provider's label, its output (echo: the prompt sent, so
    the prompt too; prompt labels and CSV rows' descriptions are named differently) and its verdict."""
    return [json.dumps(vars or {}, sort_keys=True), provider or "", str(output), bool(success)]


def _previous(run: Any, args: list[str], case: dict[str, Any], workdir: Path) -> list[str]:
    """The options with {PREVIOUS} replaced by the report of a first run of the suite alone (by the same tool)."""
    if not case.get("previous"):
        return args
    previous = workdir / "previous"
    previous.mkdir(parents=True, exist_ok=True)
    run([], previous, suite=case.get("suite", "suite.yaml"))
    return [str(next(previous.glob("*.json"))) if a == "{PREVIOUS}" else a for a in args]


def run_promptfoo(binary: str, args: list[str], config: bool, workdir: Path, ext: str = ".json",
                  suite: str = "suite.yaml") -> list[list[Any]]:
    out = workdir / f"pf{ext}"
    out.unlink(missing_ok=True)
    env = dict(os.environ, PROMPTFOO_DISABLE_TELEMETRY="1", PROMPTFOO_DISABLE_UPDATE="1",
               PROMPTFOO_DISABLE_SHARING="1", PROMPTFOO_CONFIG_DIR=str(workdir / "pf-home"),
               PROMPTFOO_DISABLE_REMOTE_GENERATION="1")
    cmd = [binary, "eval", *(["-c", suite] if config else []), *args, "-o", str(out), "--no-cache",
           "--no-table", "--no-progress-bar", "--no-write"]
    subprocess.run(cmd, env=env, cwd=HERE, capture_output=True, text=True, timeout=300, check=False)
    data = yaml.safe_load(out.read_text())
    rows = []
    for r in data["results"]["results"]:
        prov = r["provider"].get("label") or r["provider"]["id"]
        rows.append(_key(r.get("vars"), prov, (r.get("response") or {}).get("output"), r["success"]))
    return sorted(rows)


def run_evalrun(args: list[str], config: bool, workdir: Path, ext: str = ".json",
                suite: str = "suite.yaml") -> list[list[Any]]:
    out = workdir / f"er{ext}"
    cmd = [sys.executable, "-m", "evalrun", "eval", *([suite] if config else []), *args, "-o", str(out),
           "--no-cache", "--no-table", "--no-progress-bar", "--no-write"]
    done = subprocess.run(cmd, cwd=HERE, capture_output=True, text=True, timeout=300, check=False,
                          env=dict(os.environ, PYTHONPATH=str(Path(__file__).parents[2])))
    assert out.exists(), done.stderr
    rows = []
    for r in yaml.safe_load(out.read_text())["results"]:
        rows.append(_key(r.get("vars"), r.get("provider"), r.get("output"), r.get("pass")))
    return sorted(rows)


@pytest.mark.parametrize("name", sorted(CASES))
def test_same_cases_as_promptfoo(name: str, tmp_path: Path) -> None:
    case = CASES[name]
    expected = json.loads(RECORDED.read_text())[name]
    ext, suite = case.get("ext", ".json"), case.get("suite", "suite.yaml")
    args = _previous(lambda a, w, suite: run_evalrun(a, True, w, suite=suite), case["args"], case, tmp_path / "er")
    got = run_evalrun(args, case.get("config", True), tmp_path, ext, suite)
    assert got == expected
    binary = promptfoo_bin()
    if binary is not None and os.environ.get("EVALRUN_SKIP_COMPAT") != "1":
        args = _previous(lambda a, w, suite: run_promptfoo(binary, a, True, w, suite=suite), case["args"], case,
                         tmp_path / "pf")
        assert got == run_promptfoo(binary, args, case.get("config", True), tmp_path, ext, suite)


def _record() -> None:  # pragma: no cover - run by hand with promptfoo installed
    import tempfile

    binary = promptfoo_bin()
    assert binary, "promptfoo is not installed (PROMPTFOO_BIN)"
    with tempfile.TemporaryDirectory() as tmp:
        data = {}
        for name, c in CASES.items():
            work = Path(tmp) / name
            work.mkdir()
            suite = c.get("suite", "suite.yaml")
            args = _previous(lambda a, w, suite: run_promptfoo(binary, a, True, w, suite=suite), c["args"], c,
                             work / "pf")
            data[name] = run_promptfoo(binary, args, c.get("config", True), work, c.get("ext", ".json"), suite)
    RECORDED.write_text(json.dumps(data, indent=1) + "\n")


if __name__ == "__main__" and "--record" in sys.argv:  # pragma: no cover
    _record()
