"""`.html`: one self-contained page of a run or of a diff (`evalrun compare -o diff.html`), and its data (also
`evalrun view`'s): pure functions from result records to JSON-ready dicts and SVG text."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from html import escape
from importlib import resources
from pathlib import Path
from typing import Any

from jinja2.utils import htmlsafe_json_dumps

from evalrun.compare.diff import side_text
from evalrun.report.console import case_label, cut, failed_briefs, mark
from evalrun.run.tally import group_key

TEXT_MAX = 4000  # prompt / output / chunk characters kept per case (the .json report keeps everything)
SNIPPET = 160
BINS = 10
STATUS = {"pass": 0, "fail": 1, "error": 2}
PASS, FAIL, ERROR, BAR = "#2e7d32", "#c62828", "#b26a00", "#3f6fb5"
_WORD = re.compile(r"\w+", re.UNICODE)
_SENTENCE = re.compile(r"(?:[^.!?。！？\n]|[.!?](?=\S))+[.!?。！？]*")  # "7.5" does not end a sentence


def dumps(obj: Any) -> str:
    """JSON safe inside the page's <script> element: Jinja2 escapes <, >, & and ' as \\u003c etc."""
    return str(htmlsafe_json_dumps(obj, ensure_ascii=False, default=str, separators=(",", ":")))


_INLINE_SCRIPT = re.compile(r"<script>(.*?)</script>", re.S)


def csp_meta(page: str) -> str:
    """A meta Content-Security-Policy for a static page: its own inline scripts by their sha256 (the JSON data
    block is not a script that runs), nothing loaded from anywhere: the line `evalrun view` holds in its headers."""
    hashes = " ".join(f"'sha256-{base64.b64encode(hashlib.sha256(m.encode('utf-8')).digest()).decode()}'"
                      for m in _INLINE_SCRIPT.findall(page))
    policy = (f"default-src 'none'; script-src {hashes}; style-src 'unsafe-inline'; img-src data:; "
              "base-uri 'none'; form-action 'none'")
    return f'<meta http-equiv="Content-Security-Policy" content="{policy}">'


def write_page(path: Path, head: dict[str, Any], cases: Iterable[Any], title: str = "evalrun report") -> None:
    """The page (styles and renderer inlined) with `head`, then `cases` streamed one at a time into its `cases`."""
    files = resources.files("evalrun.report")
    text = files.joinpath("template.html").read_text(encoding="utf-8")
    for name, slot in (("report.css", "/*__EVALRUN_CSS__*/"), ("report.js", "/*__EVALRUN_JS__*/")):
        asset = files.joinpath(name).read_text(encoding="utf-8")
        assert "</script" not in asset.lower() and "</style" not in asset.lower(), name  # inlined in the page
        text = text.replace(slot, asset)
    text = text.replace("<title>evalrun report</title>", f"<title>{title}</title>")
    text = text.replace("<head>", f"<head>{csp_meta(text)}", 1)
    page_head, page_tail = text.split("/*__EVALRUN_DATA__*/", 1)
    with open(path, "w", encoding="utf-8", errors="backslashreplace") as f:
        f.write(page_head + dumps(head)[:-1] + ',"cases":[')
        for n, case in enumerate(cases):
            f.write(("," if n else "") + dumps(case))
        f.write("]}" + page_tail)


def rnd(x: Any, digits: int = 3) -> float | None:
    return round(float(x), digits) if isinstance(x, (int, float)) and x == x else None


def _bin(score: float) -> int:
    return min(BINS - 1, max(0, int(float(score) * BINS)))


def case_names(rec: dict[str, Any]) -> tuple[str, str]:
    return str(rec.get("provider")), str(rec.get("prompt_label") or "")


@dataclass
class Aggregates:
    #: provider and prompt names -> their first case's index: listed in that order (expansion order, also when
    #: `evalrun view` reads cases in the order they finished)
    first: tuple[dict[str, int], dict[str, int]] = field(default_factory=lambda: ({}, {}))
    cells: dict[tuple[str, str], list[int]] = field(default_factory=dict)  # pass, fail, error
    scores: dict[str, list[int]] = field(default_factory=dict)  # histogram bins per assertion name
    sums: dict[str, list[float]] = field(default_factory=dict)  # [sum, n, passed]
    case_bins: list[int] = field(default_factory=lambda: [0] * BINS)
    lower: set[str] = field(default_factory=set)  # names of lower-is-better metrics
    #: metric name -> (case index, position) where it first appears: metrics listed in that order, as cases
    metric_first: dict[str, tuple[int, int]] = field(default_factory=dict)

    @property
    def providers(self) -> list[str]:
        return sorted(self.first[0], key=self.first[0].__getitem__)

    @property
    def prompts(self) -> list[str]:
        return sorted(self.first[1], key=self.first[1].__getitem__)

    def index(self, rec: dict[str, Any]) -> tuple[int, int]:
        """The case's provider and prompt numbers (of a case added)."""
        provider, prompt = case_names(rec)
        return self.providers.index(provider), self.prompts.index(prompt)

    def add(self, rec: dict[str, Any]) -> None:
        names, i = case_names(rec), rec.get("index", 0)
        for first, name in zip(self.first, names, strict=True):
            first[name] = min(first.get(name, i), i)
        self.cells.setdefault(names, [0, 0, 0])[STATUS.get(str(rec.get("status")), 2)] += 1
        if isinstance(rec.get("score"), (int, float)):
            self.case_bins[_bin(rec["score"])] += 1
        for k, a in enumerate(rec.get("assertions") or []):
            name = str(a.get("metric") or a.get("type") or f"[{k}]")
            self.metric_first[name] = min(self.metric_first.get(name, (i, k)), (i, k))
            if a.get("lower_is_better"):
                self.lower.add(name)
            s = self.sums.setdefault(name, [0.0, 0, 0])
            s[2] += bool(a.get("pass"))
            score = a.get("score")
            if isinstance(score, (int, float)) and 0 <= score <= 1:
                self.scores.setdefault(name, [0] * BINS)[_bin(score)] += 1
                s[0] += score
                s[1] += 1

    def head(self, meta: dict[str, Any], s: dict[str, Any]) -> dict[str, Any]:
        """A run page's data but its cases: summary, provider x prompt matrix, charts (also `evalrun view`'s)."""
        metrics = [{"name": name, "n": n, "mean": rnd(total / n) if n else None, "passed": passed,
                    "lower_is_better": name in self.lower,
                    "svg": histogram(self.scores[name], name) if name in self.scores else ""}
                   for name, (total, n, passed) in sorted(self.sums.items(), key=lambda m: self.metric_first[m[0]])]
        providers, prompts = self.providers, self.prompts
        return {"kind": "run", "meta": meta, "summary": s, "providers": providers, "prompts_list": prompts,
                "matrix": [[self.cells.get((p, q)) for q in prompts] for p in providers], "metrics": metrics,
                "case_svg": histogram(self.case_bins, "case score") if any(self.case_bins) else "",
                "status_svg": status_bar(s["passed"], s["failed"], s["errors"])}


def row(i: int, rec: dict[str, Any], agg: Aggregates, flaky: bool = False) -> list[Any]:
    """[index, label, provider #, prompt #, status 0/1/2, score, None (the page: output's start), reason, flaky,
    the failed assertions' score texts]."""
    p, q = agg.index(rec)
    return [rec.get("index", i), case_label(rec, 200), p, q, STATUS.get(str(rec.get("status")), 2),
            rnd(rec.get("score")), None, cut(rec.get("error") or rec.get("reason"), SNIPPET), int(flaky),
            cut("; ".join(failed_briefs(rec)), SNIPPET) if rec.get("status") != "pass" else ""]


def _words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text) if len(w) > 2 or w.isdigit()}


def spans(claim: str, chunk: str) -> list[list[int]]:
    """[start, end] of the chunk's sentences sharing half the claim's content words (else the best one)."""
    want = _words(claim)
    if not want:
        return []
    scored = []
    for m in _SENTENCE.finditer(chunk):
        text = m.group(0)
        overlap = len(want & _words(text)) / len(want)
        if overlap > 0:
            scored.append((overlap, [m.start() + len(text) - len(text.lstrip()), m.start() + len(text.rstrip())]))
    good = [s for o, s in scored if o >= 0.5]
    return good or ([max(scored)[1]] if scored else [])


def _assertion(a: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"type": a.get("type"), "status": mark(a).lower(), "score": rnd(a.get("score")),
                           "threshold": a.get("threshold"), "weight": a.get("weight"),
                           "reason": cut(a.get("error") or a.get("reason"), 1000)}
    out.update({k: a[k] for k in ("metric", "grader", "lower_is_better") if a.get(k)})
    details: dict[str, Any] = a["details"] if isinstance(a.get("details"), dict) else {}
    raw = details.get("chunks") if isinstance(details.get("chunks"), list) else details.get("context")
    chunks: list[dict[str, Any]] = [
        {"text": cut(c.get("text"), TEXT_MAX), "relevant": c.get("relevant"), "level": c.get("level"),
         "reason": cut(c.get("reason"), 300)} if isinstance(c, dict) else {"text": cut(c, TEXT_MAX)}
        for c in (raw if isinstance(raw, list) else [])]
    claims = []
    for c in details.get("claims") or []:
        c = c if isinstance(c, dict) else {"text": str(c)}
        refs = [k for k in c.get("chunks") or c.get("evidence") or [] if isinstance(k, int) and 0 <= k < len(chunks)]
        claim = {"text": cut(c.get("text"), 1000), "verdict": c.get("verdict"), "reason": cut(c.get("reason"), 400),
                 "chunks": refs}
        if c.get("counted") is not None:
            claim["counted"] = c.get("counted")
        for k in refs:
            chunks[k].setdefault("spans", []).extend(spans(str(c.get("text") or ""), str(chunks[k]["text"])))
        claims.append(claim)
    out.update({k: v for k, v in (("claims", claims), ("chunks", chunks), ("missing", details.get("missing"))) if v})
    if a.get("children"):
        out["children"] = [_assertion(c) for c in a["children"]]
    return out


def detail(rec: dict[str, Any]) -> dict[str, Any]:
    """What an opened row shows: the rendered prompt, the output, every assertion."""
    vars_ = json.dumps(rec.get("vars") or {}, ensure_ascii=False, default=str, indent=1)
    return {"prompt": cut(rec.get("prompt"), TEXT_MAX), "output": cut(rec.get("output"), TEXT_MAX),
            "vars": cut(vars_, 2000), "error": rec.get("error"), "id": rec.get("id"),
            "latency_ms": rnd(rec.get("latency_ms"), 1), "repeat": rec.get("repeat"),
            "assertions": [_assertion(a) for a in rec.get("assertions") or []]}


def _svg(label: str, width: float, height: float, body: str, css: str = "chart") -> str:
    return (f'<svg class="{css}" role="img" aria-label="{escape(label)}" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}">{body}</svg>')


def histogram(bins: list[int], name: str, width: int = 240, height: int = 64) -> str:
    """Bars of score counts over [0, 1]; one neutral colour: whether a score passes depends on its threshold."""
    top, n = max(bins) or 1, len(bins)
    bw = (width - 4) / n
    bars = []
    for i, count in enumerate(bins):
        h = 0 if count == 0 else max(1.0, (height - 16) * count / top)
        bars.append(f'<rect x="{2 + i * bw:.1f}" y="{height - 12 - h:.1f}" width="{bw - 1:.1f}" height="{h:.1f}" '
                    f'fill="{BAR}"><title>{i / n:.1f}–{(i + 1) / n:.1f}: {count}</title></rect>')
    return _svg(f"score distribution of {name}", width, height, "".join(bars)
                + f'<line x1="2" y1="{height - 11}" x2="{width - 2}" y2="{height - 11}" stroke="#999"/>'
                f'<text x="2" y="{height - 1}" font-size="9">0</text>'
                f'<text x="{width - 8}" y="{height - 1}" font-size="9">1</text>')


def status_bar(passed: int, failed: int, errors: int, width: int = 320, height: int = 14) -> str:
    """One stacked bar: pass / fail / error shares."""
    total = passed + failed + errors or 1
    x = 0.0
    parts = []
    for count, colour, label in ((passed, PASS, "passed"), (failed, FAIL, "failed"), (errors, ERROR, "errors")):
        w = width * count / total
        if w > 0:
            parts.append(f'<rect x="{x:.1f}" y="0" width="{w:.1f}" height="{height}" fill="{colour}">'
                         f"<title>{count} {label}</title></rect>")
        x += w
    return _svg("pass fail error shares", width, height, "".join(parts), "chart statusbar")


def delta_bars(items: list[tuple[str, float, bool]], width: int = 360, row: int = 16) -> str:
    """A bar per (name, delta in -1..1, lower is better) around a centre line; green is better, in either sign."""
    if not items:
        return ""
    label_w, value_w = 150, 44
    half = (width - label_w - value_w) / 2
    mid = label_w + half
    rows = []
    for i, (name, delta, lower) in enumerate(items):
        y, w = i * row, min(1.0, abs(delta)) * (half - 4)
        colour = PASS if (delta < 0 if lower else delta > 0) else FAIL
        name = name + (" ↓" if lower else "")
        rows.append(f'<text x="0" y="{y + 11}" font-size="10">{escape(name[:26])}</text>'
                    f'<rect x="{mid if delta >= 0 else mid - w:.1f}" y="{y + 3}" width="{max(w, 0.5):.1f}" '
                    f'height="{row - 6}" fill="{colour}"><title>{escape(name)}: {delta:+.3f}</title></rect>'
                    f'<text x="{width - 2}" y="{y + 11}" font-size="10" text-anchor="end">{delta:+.3f}</text>')
    height = row * len(items)
    return _svg("score deltas", width, height,
                "".join(rows) + f'<line x1="{mid}" y1="0" x2="{mid}" y2="{height}" stroke="#999"/>')


def write(path: Path, outcome: Any) -> None:
    agg = Aggregates()
    for rec in outcome.iter_results():
        agg.add(rec)
    repeats = getattr(outcome, "repeats", None)
    flaky = {g.key for g in repeats.flaky} if repeats is not None else set()
    write_page(path, agg.head(outcome.meta(), outcome.summary), (
        [row(i, rec, agg, bool(flaky) and group_key(rec) in flaky), detail(rec)]
        for i, rec in enumerate(outcome.iter_results())))


def diff_page(data: dict[str, Any], diff: Any) -> tuple[dict[str, Any], Iterator[tuple[list[Any], dict[str, Any]]]]:
    """The compare page's data but its cases, and [row, detail] of each changed case (streamed)."""
    providers = list(dict.fromkeys(r["provider"] for r in data["by_provider_prompt"]))
    prompts = [str((p["b"] or p["a"] or {}).get("label", "")) for p in data["prompts"]]
    matrix = {(providers.index(r["provider"]), r["prompt_pair"]): r for r in data["by_provider_prompt"]}
    deltas = [(m["name"], m["delta"], bool(m.get("lower_is_better"))) for m in data["by_metric"]
              if m["delta"] is not None]
    head = {"kind": "diff", "a": {k: data["a"][k] for k in ("ref", "label")},
            "b": {k: data["b"][k] for k in ("ref", "label")}, "tolerance": data["tolerance"],
            "summary": data["summary"], "prompts": data["prompts"], "providers": providers, "prompts_list": prompts,
            "matrix": [[matrix.get((i, j)) for j in range(len(prompts))] for i in range(len(providers))],
            "metric_svg": delta_bars(deltas)}
    return head, (_diff_item(c, providers) for c in diff.cases if c.changed)


def _diff_item(c: Any, providers: list[str]) -> tuple[list[Any], dict[str, Any]]:
    """(row, detail) of one changed case (a compare.diff.CaseDiff); the detail names the case's id in A and B."""
    d = c.as_dict()
    a, b = c.record_a if c.a else None, c.record_b if c.b else None
    row = [d["label"], providers.index(c.provider), c.prompt_pair,
           d["kind"], int(d["regression"]), side_text(d["a"]), side_text(d["b"]), (d["a"] or {}).get("score"),
           (d["b"] or {}).get("score"), d["score_delta"]]
    detail = {**d, "output_a": cut(a.get("output"), TEXT_MAX) if a else None,
              "output_b": cut(b.get("output"), TEXT_MAX) if b else None,
              "prompt_b": cut(b.get("prompt"), TEXT_MAX) if b else None,
              "id_a": a.get("id") if a else None, "id_b": b.get("id") if b else None}
    return row, detail


def write_diff(path: Path, data: dict[str, Any], diff: Any) -> None:
    write_page(path, *diff_page(data, diff), "evalrun compare")
