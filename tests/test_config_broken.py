"""The corpus of broken configs (tests/broken/): each one fails with an exact `FILE:LINE: key: message`.

tests/broken/expected.tsv holds, per config, the first line of the message (file paths relative to
tests/broken). Through the CLI every one exits 2 with no traceback and nothing on stdout.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from evalrun.config import load
from evalrun.errors import ConfigError

BROKEN = Path(__file__).parent / "broken"
EXPECTED = dict(line.split("\t", 1) for line in (BROKEN / "expected.tsv").read_text().splitlines() if line)


def test_every_broken_config_has_an_expectation() -> None:
    assert sorted(EXPECTED) == sorted(p.name for p in BROKEN.glob("*.yaml"))
    assert len(EXPECTED) >= 30


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_broken_config_message(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(BROKEN)
    with pytest.raises(ConfigError) as e:
        load([name])
    assert str(e.value).splitlines()[0] == EXPECTED[name]


@pytest.mark.parametrize("name", ["top_key_typo.yaml", "unknown_type.yaml", "test_key_typo.yaml"])
def test_misspellings_get_did_you_mean(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(BROKEN)
    with pytest.raises(ConfigError) as e:
        load([name])
    assert (e.value.hint or "").startswith("did you mean `")


def test_undefined_variable_names_variable_and_test(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(BROKEN)
    with pytest.raises(ConfigError) as e:
        load(["undefined_var.yaml"])
    assert "'question'" in e.value.message and e.value.used_by == "tests[1] ('no question') at undefined_var.yaml:5"
    assert "questoin" in (e.value.hint or "")


def test_cli_exit_code_2_without_traceback() -> None:
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    env.pop("EVALRUN_DEBUG", None)
    names = sorted(EXPECTED)
    code = ("import sys, io, contextlib\nfrom evalrun.cli import main\nfails = []\n"
            f"for n in {names!r}:\n"
            "    err, out = io.StringIO(), io.StringIO()\n"
            "    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):\n"
            "        rc = main(['validate', n])\n"
            "    text = err.getvalue()\n"
            "    if rc != 2 or 'Traceback' in text or out.getvalue() or not text.startswith('evalrun: '):\n"
            "        fails.append((n, rc, text))\n"
            "print(fails)\nprint('litellm' in sys.modules)\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=BROKEN, capture_output=True, text=True, env=env,
                          check=True)
    fails, litellm = proc.stdout.splitlines()[-2:]
    assert fails == "[]" and litellm == "False"


def test_debug_shows_the_traceback() -> None:
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    proc = subprocess.run([sys.executable, "-m", "evalrun", "validate", "--debug", "top_key_typo.yaml"],
                          cwd=BROKEN, capture_output=True, text=True, env=env)
    assert proc.returncode != 0 and "Traceback" in proc.stderr and "ConfigError" in proc.stderr
