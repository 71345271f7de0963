"""evalrun and promptfoo 0.121.20 give the same pass/fail on every case of tests/compat/configs/.

Skips when Node.js or the promptfoo install is absent (PROMPTFOO_BIN overrides its path), or when
EVALRUN_SKIP_COMPAT=1 (the comparison takes about 30 s: promptfoo starts once per config).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.compat.compare import DOCUMENTED, HERE, compare, promptfoo_bin


def test_same_verdicts_as_promptfoo() -> None:
    if os.environ.get("EVALRUN_SKIP_COMPAT") == "1":
        pytest.skip("EVALRUN_SKIP_COMPAT=1")
    binary = promptfoo_bin()
    if binary is None:
        pytest.skip("node or promptfoo not installed")
    configs = sorted(Path(HERE / "configs").glob("*.yaml"))
    rows, mismatches = compare(configs, binary)
    assert len(rows) >= 170
    diffs = [r for r in rows if not r["match"] and not r["documented"]]
    assert mismatches == 0, diffs
    assert sum(r["documented"] for r in rows) == len(DOCUMENTED)  # each documented difference is still there
