"""`evalrun compare ... -o diff.html`: the diff as one self-contained page in the report's style: summary
cards, a provider x prompt matrix of pass rates A -> B, a chart of each assertion's mean score change, prompt
changes, and the changed cases (paged, filterable by change, provider, prompt and text) that open to the
assertion score deltas, the claims that flipped, and both outputs.

    head(data) -> page data but its cases     item(case, providers) -> [row, detail] of one changed case
(`evalrun view` pages the same items from its server.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evalrun.report import html_data, html_svg
from evalrun.report.html import dumps, template, write_head


def _status(side: dict[str, Any] | None) -> str:
    if side is None:
        return "–"
    if side["runs"] > 1:
        return f"{side['passed']}/{side['runs']} passed"
    return str(side["status"])


def head(data: dict[str, Any]) -> dict[str, Any]:
    """`data` is the JSON form of a diff (compare.rollup.as_dict)."""
    providers: list[str] = []
    prompts = [str((p["b"] or p["a"] or {}).get("label", "")) for p in data["prompts"]]
    matrix: dict[tuple[int, int], dict[str, Any]] = {}
    for r in data["by_provider_prompt"]:
        if r["provider"] not in providers:
            providers.append(r["provider"])
    for r in data["by_provider_prompt"]:
        matrix[(providers.index(r["provider"]), max(0, r["prompt_pair"]))] = r
    deltas = [(m["name"], m["delta"], bool(m.get("lower_is_better"))) for m in data["by_metric"]
              if m["delta"] is not None]
    return {"kind": "diff", "a": {k: data["a"][k] for k in ("ref", "label")},
            "b": {k: data["b"][k] for k in ("ref", "label")}, "tolerance": data["tolerance"],
            "summary": data["summary"], "prompts": data["prompts"], "providers": providers, "prompts_list": prompts,
            "matrix": [[matrix.get((i, j)) for j in range(len(prompts))] for i in range(len(providers))],
            "metric_svg": html_svg.delta_bars(deltas)}


def item(c: Any, providers: list[str]) -> list[Any]:
    """[row, detail] of one changed case (a compare.diff.CaseDiff); the detail names the case's id in A and B."""
    d = c.as_dict()
    rec_b = c.record_b or {}
    rec_a = c.record_a or {}
    a_score = d["a"].get("score") if d["a"] else None
    b_score = d["b"].get("score") if d["b"] else None
    row = [d["label"], providers.index(c.provider) if c.provider in providers else 0,
           max(0, c.prompt_pair), d["kind"], int(d["regression"]), _status(d["a"]), _status(d["b"]),
           a_score, b_score, d["score_delta"]]
    detail = {**d, "output_a": html_data.cut(rec_a.get("output"), html_data.TEXT_MAX) if rec_a else None,
              "output_b": html_data.cut(rec_b.get("output"), html_data.TEXT_MAX) if c.b else None,
              "prompt_b": html_data.cut(rec_b.get("prompt"), html_data.TEXT_MAX) if c.b else None,
              "id_a": rec_a.get("id") if c.a else None, "id_b": rec_b.get("id") if c.b else None}
    return [row, detail]


def write(path: Path, data: dict[str, Any], diff: Any) -> None:
    """`diff` is the Diff behind `data`, for the records of each case."""
    page = head(data)
    page_head, page_tail = template()
    with open(path, "w", encoding="utf-8", errors="backslashreplace") as f:
        f.write(page_head.replace("<title>evalrun report</title>", "<title>evalrun compare</title>"))
        write_head(f, page)
        n = 0
        for c in diff.cases:
            if not c.changed:
                continue
            f.write(("," if n else "") + dumps(item(c, page["providers"])))
            n += 1
        f.write("]}")
        f.write(page_tail)
