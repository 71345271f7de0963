"""`evalrun eval` keeps the loaded suite out of the cyclic collector during the run (each collection walked its
objects again: ~0.4 s of a 10,000-inline-test run), and gives it back afterwards."""

from __future__ import annotations

import gc
import json
from pathlib import Path

from evalrun.cli import main


def test_the_suite_is_frozen_during_the_run_and_unfrozen_after(tmp_path: Path) -> None:
    (tmp_path / "prov.py").write_text("import gc\ndef call_api(prompt, options, context):\n"
                                      "    return str(gc.get_freeze_count())\n")
    (tmp_path / "c.yaml").write_text("providers: [file://prov.py]\nprompts: ['{{q}}']\n"
                                     "tests: [{vars: {q: a}}, {vars: {q: b}}]\n")
    gc.unfreeze()
    assert main(["eval", str(tmp_path / "c.yaml"), "--no-table", "--no-progress-bar", "--no-cache",
                 "-o", str(tmp_path / "r.json")]) == 0
    outputs = [int(r["output"]) for r in json.loads((tmp_path / "r.json").read_text())["results"]]
    assert len(outputs) == 2 and min(outputs) > 1000  # the config, suite and modules loaded so far
    assert gc.get_freeze_count() == 0
