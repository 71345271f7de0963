"""`pkg://PACKAGE/path`: configs, prompts, tests and code shipped in an installed Python package.

"Installing" the example package (examples/shared-suite) means putting its folder on sys.path (in-process tests)
or PYTHONPATH (the CLI test): what `pip install -e examples/shared-suite` does, without a slow temp venv.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from evalrun import config
from evalrun.api import evaluate
from evalrun.errors import ConfigError

SHARED = Path(__file__).resolve().parent.parent / "examples" / "shared-suite"
APP = SHARED / "app" / "evalrun.yaml"


def _package(root: Path, name: str, files: dict[str, str]) -> Path:
    pkg = root / name
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    for rel, text in files.items():
        (pkg / rel).parent.mkdir(parents=True, exist_ok=True)
        (pkg / rel).write_text(text)
    return pkg


def test_example_package_suite_passes_offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(SHARED))
    outcome = evaluate(APP, results_file=tmp_path / "r.jsonl", use_cache=False)
    assert outcome.summary["passed"] == 2 and outcome.summary["total"] == 2
    records = list(outcome.iter_results())
    assert {r["description"] for r in records} == {"password reset", "refund window"}  # CSV from the package
    for r in records:
        assert r["prompt"].startswith("You are ACME's support assistant.")  # prompt from the package
        assert [a["type"] for a in r["assertions"]] == ["python", "faithfulness", "not-icontains"]
        assert r["assertions"][0]["reason"] == "no internal ids"  # checks.py from the package ran


def test_cli_with_the_package_on_pythonpath(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(SHARED)}
    out = tmp_path / "r.json"
    proc = subprocess.run([sys.executable, "-m", "evalrun", "eval", str(APP), "-o", str(out), "--no-table",
                           "--results-file", str(tmp_path / "r.jsonl")], capture_output=True, text=True,
                          env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(out.read_text())["summary"]["passed"] == 2
    env.pop("PYTHONPATH")
    proc = subprocess.run([sys.executable, "-m", "evalrun", "validate", str(APP)], capture_output=True,
                          text=True, env=env, timeout=120)
    assert proc.returncode == 2
    assert "evalrun.yaml:6: extends: package 'acme_evals' is not installed" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_error_inside_the_package_file_names_its_file_and_line(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    _package(tmp_path / "site", "team_base", {"base.yaml": (
        "prompts: ['{{q}}']\ndefaultTest:\n  assert:\n    - type: icontains\n      value: x\n"
        "    - type: contians\n      value: y\n")})
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    suite = tmp_path / "suite.yaml"
    suite.write_text("extends: pkg://team_base/base.yaml\nproviders: [echo]\ntests:\n  - vars: {q: x}\n")
    with pytest.raises(ConfigError) as info:
        config.load([str(suite)])
    e = info.value
    assert Path(str(e.file)).resolve() == (tmp_path / "site" / "team_base" / "base.yaml").resolve()
    assert e.line == 6 and e.key == "defaultTest.assert[1].type" and "did you mean `contains`" in str(e.hint)


@pytest.mark.parametrize(("ref", "message"), [
    ("pkg://no_such_pkg_xyz/base.yaml", "package 'no_such_pkg_xyz' is not installed"),
    ("pkg://team_ok/missing.yaml", "file not found: "),
    ("pkg://team_ok", "names no file inside a package"),
    ("pkg://team_ok/mod.py/x.yaml", "file not found: "),
])
def test_bad_references_are_config_errors_at_the_extends_line(ref: str, message: str, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    _package(tmp_path / "site", "team_ok", {"mod.py": ""})
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    suite = tmp_path / "suite.yaml"
    suite.write_text(f"description: x\nextends: {ref}\nproviders: [echo]\n")
    with pytest.raises(ConfigError) as info:
        config.load([str(suite)])
    assert info.value.line == 2 and info.value.key == "extends" and message in info.value.message
    assert info.value.hint


def test_pkg_refs_work_wherever_file_refs_do(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _package(tmp_path / "site", "team_kit", {
        "prompts/greet.txt": "Say hello to {{name}}",
        "tests.yaml": "- vars: {name: Ada}\n  assert: [{type: python, value: 'pkg://team_kit/checks.py:has_name'}]\n",
        "names.json": '["Bob", "Cy"]',
        "checks.py": "def has_name(output, context):\n    return context['vars']['name'] in output\n",
        "shout.py": "def shout(output, context):\n    return output.upper()\n",
    })
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        "prompts: [pkg://team_kit/prompts/greet.txt]\nproviders: [echo]\n"
        "tests:\n  - pkg://team_kit/tests.yaml\n"
        "  - vars: {name: pkg://team_kit/names.json}\n"
        "    options: {transform: 'pkg://team_kit/shout.py:shout'}\n"
        "    assert: [{type: contains, value: 'SAY HELLO TO {{name | upper}}'}]\n")
    outcome = evaluate(suite, results_file=tmp_path / "r.jsonl", use_cache=False)
    assert outcome.summary["passed"] == 3 and outcome.summary["total"] == 3
    outputs = sorted(r["output"] for r in outcome.iter_results())
    assert outputs == ["SAY HELLO TO BOB", "SAY HELLO TO CY", "Say hello to Ada"]
