"""`.json`: the whole run, `{version, meta, summary, results: [...]}` (schemas/results.schema.json), plus
`repeat_stats: [...]` after a run with --repeat N > 1.

Written as a stream: results are re-read one at a time, never all held in memory.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from evalrun.run.serialize import RESULTS_VERSION


def write(path: Path, outcome: Any) -> None:
    with open(path, "w", encoding="utf-8", errors="backslashreplace") as f:
        head = {"version": RESULTS_VERSION, "meta": outcome.meta(), "summary": outcome.summary}
        text = json.dumps(head, ensure_ascii=False, indent=2, default=str)
        f.write(text[:-2] + ',\n  "results": [')
        for i, rec in enumerate(outcome.iter_results()):
            f.write(("\n    " if i == 0 else ",\n    ") + json.dumps(rec, ensure_ascii=False, default=str))
        f.write("\n  ]")
        repeats = getattr(outcome, "repeats", None)
        if repeats is not None:  # --repeat N > 1: pass rate, intervals and flakiness per repeated case
            stats = json.dumps([g.as_dict() for g in repeats.groups], ensure_ascii=False, default=str)
            f.write(',\n  "repeat_stats": ' + stats)
        f.write("\n}\n")
