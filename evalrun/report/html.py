"""`.html`: one self-contained file (no network, no external assets) with the summary, a filterable table,
and per-case details: prompt, each assertion's score and reason, and its details (claims, verdicts,
attributions). Grader raw replies stay in the .json output."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

PLACEHOLDER = "/*__EVALRUN_DATA__*/"


def _script_safe(text: str) -> str:
    return text.replace("</", "<\\/").replace("<!--", "<\\!--")


def write(path: Path, outcome: Any) -> None:
    template = resources.files("evalrun.report").joinpath("template.html").read_text(encoding="utf-8")
    head, tail = template.split(PLACEHOLDER, 1)
    with open(path, "w", encoding="utf-8") as f:
        f.write(head)
        meta = json.dumps({"meta": outcome.meta(), "summary": outcome.summary}, ensure_ascii=False, default=str)
        f.write(_script_safe(meta[:-1]) + ',"results":[')
        for i, rec in enumerate(outcome.iter_results()):
            for a in rec.get("assertions") or []:
                (a.get("details") or {}).pop("raw_replies", None)
            f.write(("," if i else "") + _script_safe(json.dumps(rec, ensure_ascii=False, default=str)))
        f.write("]}")
        f.write(tail)
