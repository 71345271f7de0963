"""Start-up stays lean: `evalrun --help` and `validate` do not import what only runs or errors need."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
#: Modules --help never needs: the event loop (runs only), tracebacks (--debug only), litellm, dataclasses (the
#: error classes: only once a command runs), importlib.metadata (assertion plugins: only once a config is read).
HEAVY = ("asyncio", "traceback", "litellm", "dataclasses", "importlib.metadata")


def _imported(*argv: str) -> dict[str, Any]:
    code = ("import sys, io, json, contextlib\nfrom evalrun.cli import main\nbuf = io.StringIO()\n"
            "with contextlib.redirect_stdout(buf):\n"
            "    try:\n"
            f"        rc = main({list(argv)!r})\n"
            "    except SystemExit as e:\n"
            "        rc = e.code\n"
            f"print(json.dumps({{'rc': rc, 'loaded': [m for m in {list(HEAVY)!r} if m in sys.modules]}}))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={"PATH": "/usr/bin:/bin", "LITELLM_LOCAL_MODEL_COST_MAP": "True"})
    return json.loads(out.stdout.splitlines()[-1])


def test_help_imports_nothing_heavy() -> None:
    assert _imported("--help") == {"rc": 0, "loaded": []}


def test_validate_imports_no_event_loop_and_no_litellm() -> None:
    """Every assertion module is imported by validate (the registry): none may pull asyncio in at import.
    (A config with a python: provider does: that provider's module needs it.)"""
    config = ROOT / "examples" / "getting-started" / "evalrun.yaml"
    loaded = _imported("validate", str(config))
    assert loaded["rc"] == 0
    assert not {"asyncio", "litellm"} & set(loaded["loaded"])
