"""`.html`: one self-contained file (no network, no external assets, inline SVG charts) that opens offline:
a summary header, a provider x prompt matrix of pass rates, each metric's score distribution, and a paged
table (100 rows a page, so 100,000 cases stay responsive) with filters by text, status, provider, prompt and
flakiness; a row opens to the rendered prompt, the output and every assertion with its reason, rounded
score, claims with verdicts and the chunks they came from (the supporting sentence highlighted).

Written in two streaming passes over the results file (aggregates, then cases); texts longer than
html_data.TEXT_MAX are cut (the .json report keeps them whole); grader raw replies stay in the .json output.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any, TextIO

from jinja2.utils import htmlsafe_json_dumps

from evalrun.report import html_data, html_svg

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


def write_head(f: TextIO, head: dict[str, Any]) -> None:
    """The data object up to its `cases` array (left open for the caller to stream into)."""
    text = dumps(head)
    f.write(text[:-1] + ',"cases":[')


def _flaky_keys(outcome: Any) -> set[Any]:
    repeats = getattr(outcome, "repeats", None)
    return {g.key for g in repeats.flaky} if repeats is not None else set()


def run_head(meta: dict[str, Any], summary: dict[str, Any], agg: html_data.Aggregates) -> dict[str, Any]:
    """A run page's data but its cases: summary, provider x prompt matrix, charts (also `evalrun view`'s)."""
    s = summary
    return {"kind": "run", "meta": meta, "summary": s, "providers": agg.providers,
            "prompts_list": agg.prompts, "matrix": agg.matrix(), "metrics": agg.metrics(),
            "case_svg": html_svg.histogram(agg.case_bins, "case score") if any(agg.case_bins) else "",
            "status_svg": html_svg.status_bar(s["passed"], s["failed"], s["errors"])}


def write(path: Path, outcome: Any) -> None:
    from evalrun.run.repeats import group_key

    agg = html_data.Aggregates()
    for rec in outcome.iter_results():
        agg.add(rec)
    head = run_head(outcome.meta(), outcome.summary, agg)
    flaky = _flaky_keys(outcome)
    page_head, page_tail = template()
    with open(path, "w", encoding="utf-8", errors="backslashreplace") as f:
        f.write(page_head)
        write_head(f, head)
        for i, rec in enumerate(outcome.iter_results()):
            is_flaky = bool(flaky) and group_key(rec) in flaky
            f.write(("," if i else "") + dumps([html_data.row(i, rec, agg, is_flaky), html_data.detail(rec)]))
        f.write("]}")
        f.write(page_tail)
