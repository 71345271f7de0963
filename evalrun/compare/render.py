"""`evalrun compare` as console text and as Markdown (a pull-request comment), both from the JSON form."""

from __future__ import annotations

from typing import Any

from evalrun.report.console import md_cell

MAX_CASES = 50
_KIND_TEXT = {"noise": "within noise", "unchanged": "score changed"}  # else the kind, in words


def _num(v: Any, signed: bool = False) -> str:
    if v is None:
        return "–"
    return f"{v:+.2f}" if signed else f"{v:.2f}"


def _pct(v: Any) -> str:
    return "–" if v is None else f"{100 * v:.0f}%"


def _side(s: dict[str, Any] | None) -> str:
    if s is None:
        return "–"
    if s["runs"] > 1:
        lo, hi = s["pass_rate_ci"]
        return f"{s['passed']}/{s['runs']} passed [{_pct(lo)}–{_pct(hi)}]"
    return s["status"]


def _case_line(c: dict[str, Any]) -> str:
    text = f"{_KIND_TEXT.get(c['kind'], c['kind'].replace('_', ' '))}: {c['label']}: {_side(c['a'])} -> {_side(c['b'])}"
    if c["score_delta"] is not None and abs(c["score_delta"]) > 1e-9:
        text += f"; score {_num(c['a'].get('score'))} -> {_num(c['b'].get('score'))} ({_num(c['score_delta'], True)})"
    b = c.get("b") or {}
    if c["kind"] == "new_error" and b.get("error"):
        text += f"; error: {str(b['error'])[:200]}"
    worse = [m for m in c["metric_deltas"] if m["regressed"]]
    if worse:
        text += "; " + ", ".join(f"{_metric_name(m)} {m['a']:.2f} -> {m['b']:.2f}" for m in worse)
    return text


def _lists(data: dict[str, Any]) -> list[tuple[str, list[str]]]:
    """The lists both forms show, each with its lines: the changed cases by kind of change, the claim flips."""
    cases = data["cases"]
    groups = [("Regressions", [c for c in cases if c["regression"]]),
              ("Improvements", [c for c in cases if not c["regression"]
                                and (c["kind"] == "newly_passing" or c["score_improved"])]),
              ("Within noise", [c for c in cases if c["kind"] == "noise" and not c["regression"]]),
              ("Added or removed", [c for c in cases if c["kind"] in ("added", "removed")])]
    flips = [f"{c['label']}: {f['assertion']}: {f['claim'][:120]!r} {f['a']} -> {f['b']}"
             for c in cases for f in c["claim_flips"]]
    out = [(title, [_case_line(c) for c in chosen]) for title, chosen in groups if chosen]
    return out + ([("Claim flips", flips)] if flips else [])


#: Columns of words (left-aligned in Markdown); the others hold figures.
_WORDS = ("provider", "prompt", "metric", "test")


def _tables(data: dict[str, Any]) -> list[tuple[str, list[str], list[list[str]]]]:
    """The roll-ups both forms show as tables: (title, header, rows); empty ones left out."""
    pairs = [[r["provider"], r["prompt"][:50] + (" (text changed)" if r["prompt_text_changed"] else ""),
              _pct(r["pass_rate_a"]), _pct(r["pass_rate_b"]), _num(r["score_a"]), _num(r["score_b"]),
              str(r["newly_failing"]), str(r["newly_passing"]), str(r["new_error"])] for r in data["by_provider_prompt"]]
    metrics = [[_metric_name(m), _num(m["score_a"]), _num(m["score_b"]), _num(m["delta"], True),
                str(m["cases_regressed"]), str(m["cases_improved"])] for m in data["by_metric"]]
    tests = [[t["description"] or f"tests[{t['test_index']}]", _pct(t["pass_rate_a"]), _pct(t["pass_rate_b"]),
              str(t["regressions"]), str(t["newly_passing"])]
             for t in data["by_test"] if t["regressions"] or t["newly_passing"]]
    tables = [("By provider x prompt", ["provider", "prompt", "pass A", "pass B", "score A", "score B",
                                        "newly failing", "newly passing", "new errors"], pairs),
              ("By metric", ["metric", "A", "B", "Δ", "cases regressed", "cases improved"], metrics),
              ("Tests with changes", ["test", "pass A", "pass B", "regressed", "newly passing"], tests)]
    return [t for t in tables if t[2]]


def _more(items: list[str]) -> list[str]:
    extra = len(items) - MAX_CASES
    return [f"... and {extra} more (--format json lists them all)"] if extra > 0 else []


def _headline(data: dict[str, Any]) -> str:
    s = data["summary"]
    return (f"{s['matched']} cases matched ({s['added']} added, {s['removed']} removed): "
            f"{s['newly_failing']} newly failing, {s['newly_passing']} newly passing, {s['new_error']} new errors, "
            f"{s['score_regressed']} score regressions, {s['claim_flips']} claim flips, {s['noise']} within noise")


def _verdict(data: dict[str, Any]) -> str:
    n = data["summary"]["regressions"]
    tol = data["tolerance"]
    return (f"{n} regression{'s' if n != 1 else ''} beyond tolerance {tol:g}" if n
            else f"No regression beyond tolerance {tol:g}")


def _prompt_notes(data: dict[str, Any]) -> list[str]:
    out = []
    for i, p in enumerate(data["prompts"]):
        label = repr((p["b"] or p["a"])["label"][:60])
        if p["text_changed"]:
            out.append(f"prompts[{i}] ({label}): text changed")
        elif p["a"] is None or p["b"] is None:
            out.append(f"prompt {label}: only in {'B' if p['a'] is None else 'A'}")
    return out


def text(data: dict[str, Any]) -> str:
    lines = [f"Comparing A {data['a']['label']} -> B {data['b']['label']}", _headline(data)]
    lines += [f"  {n}" for n in _prompt_notes(data)]
    for title, items in _lists(data):
        lines.append(f"{title} ({len(items)}):")
        lines += [f"  {x}" for x in items[:MAX_CASES] + _more(items)]
    for title, head, rows in _tables(data):
        widths = [max(map(len, column)) for column in zip(head, *rows, strict=True)]
        lines.append(f"{title}:")
        lines += ["  " + "  ".join(x.ljust(w) for x, w in zip(row, widths, strict=True)).rstrip() for row in (head, *rows)]
    lines.append(_verdict(data))
    return "\n".join(lines)


def _metric_name(m: dict[str, Any]) -> str:
    """The name, with `(lower is better)` for a metric whose rise is a regression."""
    return m["name"] + (" (lower is better)" if m.get("lower_is_better") else "")


def markdown(data: dict[str, Any]) -> str:
    n = data["summary"]["regressions"]
    out = [f"### evalrun compare: {'❌' if n else '✅'} {_verdict(data)}", "",
           f"A `{data['a']['label']}` → B `{data['b']['label']}`: {_headline(data)}", ""]
    out += [f"- {md_cell(p)}" for p in _prompt_notes(data)]
    for title, head, rows in _tables(data):
        out += ["", f"**{title}**", "", "| " + " | ".join(head) + " |",
                "|" + "|".join("---" if h in _WORDS else "---:" for h in head) + "|",
                *("| " + " | ".join(md_cell(x) for x in row) + " |" for row in rows)]
    for title, items in _lists(data):
        out += ["", f"<details{' open' if title == 'Regressions' else ''}><summary>{title} ({len(items)})</summary>",
                "", *(f"- {md_cell(x)}" for x in items[:MAX_CASES] + _more(items)), "", "</details>"]
    return "\n".join(out) + "\n"
