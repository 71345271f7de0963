"""The data behind the HTML report, from result records. Pure: records in, JSON-ready dicts and SVG text out."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from html import escape
from typing import Any

from evalrun.report.console import cut, failed_briefs

TEXT_MAX = 4000  # prompt / output / chunk characters kept per case (the .json report keeps everything)
SNIPPET = 160
BINS = 10
STATUS = {"pass": 0, "fail": 1, "error": 2}
PASS, FAIL, ERROR, BAR = "#2e7d32", "#c62828", "#b26a00", "#3f6fb5"
_WORD = re.compile(r"\w+", re.UNICODE)
_SENTENCE = re.compile(r"(?:[^.!?。！？\n]|[.!?](?=\S))+[.!?。！？]*")  # "7.5" does not end a sentence


def rnd(x: Any, digits: int = 3) -> float | None:
    return round(float(x), digits) if isinstance(x, (int, float)) and x == x else None


def test_label(rec: dict[str, Any]) -> str:
    vars_ = rec.get("vars") or {}
    shown = ", ".join(f"{k}={v if isinstance(v, str) else v!r}" for k, v in vars_.items())
    desc = rec.get("description")
    return cut(f"{desc} [{shown}]" if desc and shown else desc or shown or f"tests[{rec.get('test_index', 0)}]", 200)


@dataclass
class Aggregates:
    providers: list[str] = field(default_factory=list)
    prompts: list[str] = field(default_factory=list)
    cells: dict[tuple[int, int], list[int]] = field(default_factory=dict)  # pass, fail, error
    scores: dict[str, list[int]] = field(default_factory=dict)  # histogram bins per assertion name
    sums: dict[str, list[float]] = field(default_factory=dict)  # [sum, n, passed]
    case_bins: list[int] = field(default_factory=lambda: [0] * BINS)
    lower: set[str] = field(default_factory=set)  # names of lower-is-better metrics

    def index(self, rec: dict[str, Any]) -> tuple[int, int]:
        provider = str(rec.get("provider"))
        prompt = str(rec.get("prompt_label") or "")
        if provider not in self.providers:
            self.providers.append(provider)
        if prompt not in self.prompts:
            self.prompts.append(prompt)
        return self.providers.index(provider), self.prompts.index(prompt)

    def add(self, rec: dict[str, Any]) -> None:
        cell = self.cells.setdefault(self.index(rec), [0, 0, 0])
        cell[STATUS.get(str(rec.get("status")), 2)] += 1
        if isinstance(rec.get("score"), (int, float)):
            self.case_bins[_bin(rec["score"])] += 1
        for i, a in enumerate(rec.get("assertions") or []):
            name = str(a.get("metric") or a.get("type") or f"[{i}]")
            if a.get("lower_is_better"):
                self.lower.add(name)
            s = self.sums.setdefault(name, [0.0, 0, 0])
            s[2] += bool(a.get("pass"))
            score = a.get("score")
            if isinstance(score, (int, float)) and 0 <= score <= 1:
                self.scores.setdefault(name, [0] * BINS)[_bin(score)] += 1
                s[0] += score
                s[1] += 1

    def reorder(self, providers: list[int], prompts: list[int]) -> None:
        """List the providers and prompts in this order (their current numbers, new first first); the matrix's
        cells follow. (`evalrun view` reads cases in the order they finished, the report in expansion order.)"""
        pnew = {old: new for new, old in enumerate(providers)}
        qnew = {old: new for new, old in enumerate(prompts)}
        self.providers = [self.providers[i] for i in providers]
        self.prompts = [self.prompts[i] for i in prompts]
        self.cells = {(pnew[p], qnew[q]): cell for (p, q), cell in self.cells.items()}

    def matrix(self) -> list[list[list[int] | None]]:
        return [[self.cells.get((p, q)) for q in range(len(self.prompts))] for p in range(len(self.providers))]

    def metrics(self) -> list[dict[str, Any]]:
        out = []
        for name, (total, n, passed) in self.sums.items():
            bins = self.scores.get(name)
            lower = name in self.lower
            out.append({"name": name, "n": n, "mean": rnd(total / n) if n else None, "passed": passed,
                        "lower_is_better": lower, "svg": histogram(bins, name) if bins else ""})
        return out


def _bin(score: float) -> int:
    return min(BINS - 1, max(0, int(float(score) * BINS)))


def row(i: int, rec: dict[str, Any], agg: Aggregates, flaky: bool = False) -> list[Any]:
    """[index, test label, provider #, prompt #, status 0/1/2, score, None, reason snippet, flaky, failed]; the page
    fills slot 6 with the output's first characters from the case detail (kept once in the file); `failed` names
    the assertions that failed the case, with their scores against their thresholds (shown by the case score)."""
    p, q = agg.index(rec)
    return [rec.get("index", i), test_label(rec), p, q, STATUS.get(str(rec.get("status")), 2), rnd(rec.get("score")),
            None, cut(rec.get("error") or rec.get("reason"), SNIPPET), int(flaky),
            cut("; ".join(failed_briefs(rec)), SNIPPET) if rec.get("status") != "pass" else ""]


def _words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text) if len(w) > 2 or w.isdigit()}


def spans(claim: str, chunk: str) -> list[list[int]]:
    """Character ranges of the chunk's sentences that support the claim: those sharing at least half of the
    claim's content words (the best one when none does)."""
    want = _words(claim)
    if not want or not chunk:
        return []
    scored = []
    for m in _SENTENCE.finditer(chunk):
        text = m.group(0)
        overlap = len(want & _words(text)) / len(want)
        if overlap > 0:
            start = m.start() + (len(text) - len(text.lstrip()))
            scored.append((overlap, [start, m.start() + len(text.rstrip())]))
    good = [s for o, s in scored if o >= 0.5]
    if good:
        return good
    return [max(scored)[1]] if scored else []


def _chunks(details: dict[str, Any]) -> list[dict[str, Any]]:
    raw = details.get("chunks")
    if not isinstance(raw, list):
        raw = details.get("context")
    out = []
    for c in raw if isinstance(raw, list) else []:
        if isinstance(c, dict):
            out.append({"text": cut(c.get("text"), TEXT_MAX), "relevant": c.get("relevant"),
                        "level": c.get("level"), "reason": cut(c.get("reason"), 300)})
        else:
            out.append({"text": cut(c, TEXT_MAX)})
    return out


def _assertion(a: dict[str, Any]) -> dict[str, Any]:
    st = "error" if a.get("error") else ("pass" if a.get("pass") else "fail")
    out: dict[str, Any] = {"type": a.get("type"), "status": st, "score": rnd(a.get("score")),
                           "threshold": a.get("threshold"), "weight": a.get("weight"),
                           "reason": cut(a.get("error") or a.get("reason"), 1000)}
    if a.get("metric"):
        out["metric"] = a["metric"]
    if a.get("grader"):
        out["grader"] = a["grader"]
    if a.get("lower_is_better"):
        out["lower_is_better"] = True
    raw_details = a.get("details")
    details: dict[str, Any] = raw_details if isinstance(raw_details, dict) else {}
    chunks = _chunks(details)
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
    if claims:
        out["claims"] = claims
    if chunks:
        out["chunks"] = chunks
    if details.get("missing"):
        out["missing"] = details["missing"]
    if a.get("children"):
        out["children"] = [_assertion(c) for c in a["children"]]
    return out


def detail(rec: dict[str, Any]) -> dict[str, Any]:
    """What an opened row shows: the rendered prompt, the output, every assertion."""
    return {"prompt": cut(rec.get("prompt"), TEXT_MAX), "output": cut(rec.get("output"), TEXT_MAX),
            "vars": cut(_vars_text(rec.get("vars")), 2000), "error": rec.get("error"), "id": rec.get("id"),
            "latency_ms": rnd(rec.get("latency_ms"), 1), "repeat": rec.get("repeat"),
            "assertions": [_assertion(a) for a in rec.get("assertions") or []]}


def _vars_text(vars_: Any) -> str:
    return json.dumps(vars_ or {}, ensure_ascii=False, default=str, indent=1)


def histogram(bins: list[int], name: str, width: int = 240, height: int = 64) -> str:
    """Bars of score counts over [0, 1] in len(bins) equal bins, with 0 and 1 marked. One neutral colour:
    whether a score passes depends on each assertion's threshold, not on where the bar sits."""
    top = max(bins) or 1
    n = len(bins)
    bw = (width - 4) / n
    bars = []
    for i, count in enumerate(bins):
        h = 0 if count == 0 else max(1.0, (height - 16) * count / top)
        lo, hi = i / n, (i + 1) / n
        bars.append(f'<rect x="{2 + i * bw:.1f}" y="{height - 12 - h:.1f}" width="{bw - 1:.1f}" height="{h:.1f}" '
                    f'fill="{BAR}"><title>{lo:.1f}–{hi:.1f}: {count}</title></rect>')
    return (f'<svg class="chart" role="img" aria-label="score distribution of {escape(name)}" width="{width}" '
            f'height="{height}" viewBox="0 0 {width} {height}">{"".join(bars)}'
            f'<line x1="2" y1="{height - 11}" x2="{width - 2}" y2="{height - 11}" stroke="#999"/>'
            f'<text x="2" y="{height - 1}" font-size="9">0</text>'
            f'<text x="{width - 8}" y="{height - 1}" font-size="9">1</text></svg>')


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
    return (f'<svg class="chart statusbar" role="img" aria-label="pass fail error shares" width="{width}" '
            f'height="{height}" viewBox="0 0 {width} {height}">{"".join(parts)}</svg>')


def delta_bars(items: list[tuple[str, float, bool]], width: int = 360, row: int = 16) -> str:
    """Horizontal bars of signed deltas (-1..1) around a centre line, one per named item: (name, delta, lower is
    better). A change for the better is green whichever its sign (a fall, for a lower-is-better metric)."""
    if not items:
        return ""
    label_w, value_w = 150, 44
    mid = label_w + (width - label_w - value_w) / 2
    half = (width - label_w - value_w) / 2 - 4
    rows = []
    for i, (name, delta, lower) in enumerate(items):
        y = i * row
        w = min(1.0, abs(delta)) * half
        x = mid if delta >= 0 else mid - w
        colour = PASS if (delta < 0 if lower else delta > 0) else FAIL
        name = name + (" ↓" if lower else "")
        rows.append(f'<text x="0" y="{y + 11}" font-size="10">{escape(name[:26])}</text>'
                    f'<rect x="{x:.1f}" y="{y + 3}" width="{max(w, 0.5):.1f}" height="{row - 6}" fill="{colour}">'
                    f"<title>{escape(name)}: {delta:+.3f}</title></rect>"
                    f'<text x="{width - 2}" y="{y + 11}" font-size="10" text-anchor="end">{delta:+.3f}</text>')
    height = row * len(items)
    return (f'<svg class="chart" role="img" aria-label="score deltas" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}">{"".join(rows)}'
            f'<line x1="{mid}" y1="0" x2="{mid}" y2="{height}" stroke="#999"/></svg>')
