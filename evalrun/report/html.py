"""`.html`: one self-contained page (no network, inline SVG charts) of a run, or of a diff (`evalrun compare -o
diff.html`), written in two streaming passes over the results (aggregates, then cases). `evalrun view` serves
the same data (run_head, diff_head, diff_item) page by page."""

from __future__ import annotations

from collections.abc import Iterable
from importlib import resources
from pathlib import Path
from typing import Any

from jinja2.utils import htmlsafe_json_dumps

from evalrun.report import html_data
from evalrun.report.console import cut

PLACEHOLDER = "/*__EVALRUN_DATA__*/"


def dumps(obj: Any) -> str:
    """JSON safe inside the page's <script> element: Jinja2 escapes <, >, & and ' as \\u003c etc."""
    return str(htmlsafe_json_dumps(obj, ensure_ascii=False, default=str, separators=(",", ":")))


def asset(name: str) -> str:
    """report.css or report.js: the styles and the renderer every HTML page of evalrun uses."""
    text = resources.files("evalrun.report").joinpath(name).read_text(encoding="utf-8")
    assert "</script" not in text.lower() and "</style" not in text.lower(), name  # inlined in template.html
    return text


def template() -> tuple[str, str]:
    """The static page around its data: styles and renderer inlined (the page needs no network)."""
    text = resources.files("evalrun.report").joinpath("template.html").read_text(encoding="utf-8")
    text = text.replace("/*__EVALRUN_CSS__*/", asset("report.css")).replace("/*__EVALRUN_JS__*/", asset("report.js"))
    head, tail = text.split(PLACEHOLDER, 1)
    return head, tail


def write_page(path: Path, head: dict[str, Any], cases: Iterable[Any], title: str = "evalrun report") -> None:
    """The page with its data: `head`, then `cases` streamed into its `cases` array (one at a time)."""
    page_head, page_tail = template()
    with open(path, "w", encoding="utf-8", errors="backslashreplace") as f:
        f.write(page_head.replace("<title>evalrun report</title>", f"<title>{title}</title>"))
        f.write(dumps(head)[:-1] + ',"cases":[')
        for n, case in enumerate(cases):
            f.write(("," if n else "") + dumps(case))
        f.write("]}" + page_tail)


def run_head(meta: dict[str, Any], summary: dict[str, Any], agg: html_data.Aggregates) -> dict[str, Any]:
    """A run page's data but its cases: summary, provider x prompt matrix, charts (also `evalrun view`'s)."""
    s = summary
    return {"kind": "run", "meta": meta, "summary": s, "providers": agg.providers,
            "prompts_list": agg.prompts, "matrix": agg.matrix(), "metrics": agg.metrics(),
            "case_svg": html_data.histogram(agg.case_bins, "case score") if any(agg.case_bins) else "",
            "status_svg": html_data.status_bar(s["passed"], s["failed"], s["errors"])}


def write(path: Path, outcome: Any) -> None:
    from evalrun.run.repeats import group_key

    agg = html_data.Aggregates()
    for rec in outcome.iter_results():
        agg.add(rec)
    head = run_head(outcome.meta(), outcome.summary, agg)
    repeats = getattr(outcome, "repeats", None)
    flaky = {g.key for g in repeats.flaky} if repeats is not None else set()
    write_page(path, head, ([html_data.row(i, rec, agg, bool(flaky) and group_key(rec) in flaky),
                             html_data.detail(rec)] for i, rec in enumerate(outcome.iter_results())))


def _status(side: dict[str, Any] | None) -> str:
    if side is None:
        return "–"
    if side["runs"] > 1:
        return f"{side['passed']}/{side['runs']} passed"
    return str(side["status"])


def diff_head(data: dict[str, Any]) -> dict[str, Any]:
    """`data` is the JSON form of a diff (compare.diff.as_dict)."""
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
            "metric_svg": html_data.delta_bars(deltas)}


def diff_item(c: Any, providers: list[str]) -> list[Any]:
    """[row, detail] of one changed case (a compare.diff.CaseDiff); the detail names the case's id in A and B."""
    d = c.as_dict()
    rec_b = c.record_b or {}
    rec_a = c.record_a or {}
    a_score = d["a"].get("score") if d["a"] else None
    b_score = d["b"].get("score") if d["b"] else None
    row = [d["label"], providers.index(c.provider) if c.provider in providers else 0,
           max(0, c.prompt_pair), d["kind"], int(d["regression"]), _status(d["a"]), _status(d["b"]),
           a_score, b_score, d["score_delta"]]
    detail = {**d, "output_a": cut(rec_a.get("output"), html_data.TEXT_MAX) if rec_a else None,
              "output_b": cut(rec_b.get("output"), html_data.TEXT_MAX) if c.b else None,
              "prompt_b": cut(rec_b.get("prompt"), html_data.TEXT_MAX) if c.b else None,
              "id_a": rec_a.get("id") if c.a else None, "id_b": rec_b.get("id") if c.b else None}
    return [row, detail]


def write_diff(path: Path, data: dict[str, Any], diff: Any) -> None:
    """`diff` is the Diff behind `data`, for the records of each case."""
    page = diff_head(data)
    write_page(path, page, (diff_item(c, page["providers"]) for c in diff.cases if c.changed), "evalrun compare")
