"""Results as text: the console table (rows = test x vars, columns = provider x prompt), the run summary, and a
case's text for test runners and JUnit (`failure_text`, `details_text`)."""

from __future__ import annotations

import json
import re
import shutil
import textwrap
from collections.abc import Iterator
from typing import Any

MAX_ROWS = 200
CELL_MAX = 250  # promptfoo's default --table-cell-max-length
CELL_LINES = 6
WRAP = 3  # physical lines an assertion's line may take in its column
OUTPUT_MAX = 600  # output characters in a failure text


def cut(text: Any, limit: int) -> str:
    """The text cut to `limit` characters (an ellipsis marks the cut)."""
    s = "" if text is None else str(text)
    return s if len(s) <= limit else s[: limit - 1] + "…"


def shorten(text: Any, limit: int = CELL_MAX) -> str:
    """The text on one line (whitespace runs as one space), cut to `limit` characters."""
    return cut(" ".join(str(text).split()), limit)


def md_cell(text: Any) -> str:
    """The text on one line, safe in a Markdown table cell."""
    return " ".join(str(text).split()).replace("|", "\\|")


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def mark(a: dict[str, Any]) -> str:
    return "ERROR" if a.get("error") else ("PASS" if a.get("pass") else "FAIL")


def score_text(a: dict[str, Any]) -> str:
    """`faithfulness 0.42 < 0.70`: the type (or metric), its score against its threshold in its direction."""
    name = str(a.get("metric") or a.get("type"))
    score, thr = a.get("score"), a.get("threshold")
    if not _is_number(score) or (not a.get("grader") and score in (0, 1) and thr is None):
        return name
    if not _is_number(thr):
        return f"{name} {score:.2f}"
    passed = bool(a.get("pass"))
    if str(a.get("type", "")).startswith("not-"):
        return f"{name} {score:.2f} (threshold {thr:.2f})"
    op = ("≤" if passed else ">") if a.get("lower_is_better") else ("≥" if passed else "<")
    return f"{name} {score:.2f} {op} {thr:.2f}"


_NOT_AGAINST = {"supported", None}
_VERDICT_TAIL = re.compile(r"[:;,]? *\(?\d+(\.\d+)? *(<=|>=|<|>|≤|≥) *threshold \d+(\.\d+)?\)?$")


#: no cut: what --table-cell-max-length lifts the inner cuts to (the cell's own length is the only limit)
WHOLE = 1 << 30


def deciding_claim(a: dict[str, Any], full: bool = False) -> str | None:
    """The first claim that counted against the assertion, as `"claim" verdict: why` (no evidence quote); `full`:
    neither cut."""
    details = a.get("details")
    claims = details.get("claims") if isinstance(details, dict) else None
    for c in claims if isinstance(claims, list) else ():
        if not isinstance(c, dict):
            continue
        if c.get("counted") is False or (c.get("counted") is None and c.get("verdict") in _NOT_AGAINST
                                         and c.get("attributed") is not False):
            continue
        verdict = c.get("verdict") or ("not in the context" if c.get("attributed") is False else "counted")
        why = str(c.get("reason") or "").split(': "', 1)[0]
        text, why = shorten(c.get("text", ""), WHOLE if full else 160), shorten(why, WHOLE if full else 120)
        return f'"{text}" {verdict}' + (f": {why}" if why else "")
    return None


def brief(a: dict[str, Any], full: bool = False) -> str:
    """One assertion in one line (see the module docstring); `full`: its reason or claim not cut."""
    limit = WHOLE if full else 200
    if a.get("error"):
        return f"{a.get('type')}: ERROR {shorten(a['error'], limit)}"
    head = score_text(a)
    claim = deciding_claim(a, full)
    if claim:
        return f"{head}: {claim}"
    if not a.get("pass") and a.get("reason"):
        reason = _VERDICT_TAIL.sub("", str(a["reason"]))  # the score against the threshold is in `head`
        return f"{head}: {shorten(reason, limit)}"
    return head


def failed_briefs(rec: dict[str, Any]) -> list[str]:
    """The score texts of the assertions that failed or errored the case."""
    return [score_text(a) + (" ERROR" if a.get("error") else "") for a in rec.get("assertions") or []
            if a.get("error") or (not a.get("pass") and (a.get("weight", 1) or 0) > 0)]


def _assertion_lines(a: dict[str, Any], indent: str) -> Iterator[str]:
    """The assertion's verdict and reason, its claims and chunks, then its children (assert-set)."""
    score = f" (score {a['score']:.3g})" if _is_number(a.get("score")) else ""
    grader = f" [grader {a['grader']}]" if a.get("grader") else ""
    details: dict[str, Any] = a["details"] if isinstance(a.get("details"), dict) else {}
    text = (a.get("error") and details.get("error_detail")) or a.get("error") or a.get("reason") or ""  # whole
    yield f"{indent}[{mark(a)}] {a.get('type')}{score}{grader}: {text}"
    more = indent + "    "
    for c in details.get("claims") or []:
        if isinstance(c, dict):
            extra = "" if c.get("correct") is None else ", correct" if c["correct"] else ", incorrect"
            extra += f", chunks {list(c['chunks'])}" if c.get("chunks") else ""
            reason = f" — {shorten(c['reason'], WHOLE)}" if c.get("reason") else ""  # the evidence, whole
            yield f"{more}- {c.get('verdict', '?')}{extra}: {shorten(c.get('text', ''), WHOLE)!r}{reason}"
    for i, ch in enumerate(details.get("chunks") or []):
        if isinstance(ch, dict) and "level" in ch:  # noise-sensitivity's labelled chunks show through its claims
            used = ", used" if ch.get("used") else ""
            yield f"{more}chunk {i}: {ch.get('level')}{used}: {shorten(ch.get('text', ''), 100)!r}"
    if details.get("missing"):
        yield f"{more}missing: {', '.join(shorten(m, 80) for m in details['missing'])}"
    for child in a.get("children") or []:
        yield from _assertion_lines(child, indent + "  ")


def vars_text(vars_: dict[str, Any], each: int = 1000) -> str:
    """`k=v, ...` (a value that is not a string as JSON), each value cut to `each` characters."""
    return ", ".join(f"{k}={shorten(v if isinstance(v, str) else json.dumps(v, default=str), each)}"
                     for k, v in vars_.items())


def case_label(rec: dict[str, Any], limit: int = 80) -> str:
    """`description [vars]`, or the vars, or `tests[i]`, on one line cut to `limit` characters."""
    shown, desc = vars_text(rec.get("vars") or {}, 80), rec.get("description")
    return shorten(f"{desc} [{shown}]" if desc and shown else desc or shown or f"tests[{rec.get('test_index', 0)}]",
                   limit)


def failure_text(rec: dict[str, Any], *, show_provider: bool = True) -> str:
    """Why the case did not pass: its reason, each failing assertion with its claims, output, vars, provider."""
    if rec.get("status") == "error":  # the whole message (a user-code traceback too), not its one-line cut
        lines = [f"ERROR: {rec.get('error_detail') or rec.get('error') or rec.get('reason') or 'the case could not finish'}"]
    else:
        lines = [str(rec.get("reason") or "an assertion failed")]
    asserts = rec.get("assertions") or []
    bad = [a for a in asserts if a.get("error") or not a.get("pass")]
    for a in bad:
        lines.extend(_assertion_lines(a, "  "))
    passed = len(asserts) - len(bad)
    if passed:
        lines.append(f"  ({passed} other assertion{'s' if passed != 1 else ''} passed)")
    if rec.get("output") is not None:
        s = str(rec["output"])
        lines.append("output: " + (s if len(s) <= OUTPUT_MAX else s[:OUTPUT_MAX] + f"… ({len(s)} chars)"))
    if rec.get("vars"):
        lines.append(f"vars: {vars_text(rec['vars'], 80)}")
    if show_provider:
        lines.append(f"provider: {rec.get('provider')}  prompt: {shorten(rec.get('prompt_label') or '', 80)}")
    return "\n".join(lines)


def details_text(rec: dict[str, Any]) -> str:
    """Every assertion with its reason and graded details (claims with verdicts, chunk relevance)."""
    lines = [f"status: {rec.get('status')}  score: {rec.get('score')}  provider: {rec.get('provider')}"]
    for a in rec.get("assertions") or []:
        lines.extend(_assertion_lines(a, "  "))
    return "\n".join(lines)


def cell_lines(rec: dict[str, Any], cell_max: int | None = None) -> list[str]:
    """The cell of one case: its verdict line, then each graded or failing assertion in brief; each line cut at
    CELL_MAX characters, or with `cell_max` (--table-cell-max-length) at that many and nothing cut inside."""
    status = rec.get("status")
    asserts = rec.get("assertions") or []
    limit, full = cell_max or CELL_MAX, cell_max is not None
    if status == "error":  # the error first; the other assertions' results below it
        lines = ["[ERROR] " + shorten(str(rec.get("error") or rec.get("reason") or ""), limit)]
        asserts = [a for a in asserts if not a.get("error")]
    else:
        lines = [f"[{'PASS' if status == 'pass' else 'FAIL'}] " + shorten(str(rec.get("output") or ""), limit)]
    shown = [a for a in asserts if a.get("grader") or a.get("error") or not a.get("pass")]
    lines += ["  " + ("✓ " if a.get("pass") else "✗ ") + shorten(brief(a, full), limit)
              for a in shown[:CELL_LINES - 1]]
    if len(shown) > CELL_LINES - 1:
        lines.append(f"  ... {len(shown) - CELL_LINES + 1} more assertions (-o report.html shows them)")
    if status == "fail" and not any(not a.get("pass") for a in shown):  # failed on the test's threshold
        lines.append("  ✗ " + shorten(str(rec.get("reason") or ""), limit))
    return [cut(line, cell_max) for line in lines] if cell_max else lines


def table(outcome: Any, *, width: int | None = None, max_rows: int = MAX_ROWS, cell_max: int | None = None) -> str:
    """Rows = test x var combination (x repeat), columns = provider x prompt; the first `max_rows` rows. `cell_max`
    (promptfoo's --table-cell-max-length): each cell line is cut at that many characters and then wrapped whole
    onto as many lines as it needs, never cut again at the column's width."""
    columns: list[str] = []
    rows: dict[str, tuple[str, dict[str, list[str]]]] = {}  # key -> (label, column -> cell lines)
    shown = 0
    for rec in outcome.iter_results():
        key = f"{rec.get('test_index', 0)}:{rec.get('repeat', 0)}:{json.dumps(rec.get('vars'), default=str)}"
        if key not in rows and len(rows) >= max_rows:
            break  # a row's cells are contiguous in expansion order: the rest are later rows
        column = f"[{rec.get('provider')}] {rec.get('prompt_label') or ''}".rstrip()
        if column not in columns:
            columns.append(column)
        if key not in rows:
            rows[key] = (case_label(rec, cell_max or 80), {})
        rows[key][1][column] = cell_lines(rec, cell_max)
        shown += 1
    if not rows:
        return "No cases ran."
    width = width or shutil.get_terminal_size((120, 24)).columns
    first_w = min(40, max(8, *(len(label) for label, _ in rows.values())))
    col_w = max(16, (width - first_w - 3 * len(columns) - 1) // max(1, len(columns)))
    widths = [first_w] + [col_w] * len(columns)

    def line(values: list[str]) -> str:
        return "| " + " | ".join(cut(v, w).ljust(w) for v, w in zip(values, widths, strict=True)) + " |"

    def wrapped(cell: list[str]) -> list[str]:
        """The verdict line cut to the column; an assertion line wrapped onto at most WRAP lines (with `cell_max`:
        every line wrapped whole)."""
        if cell_max is not None:
            return [part for text in cell for part in textwrap.wrap(text, col_w, subsequent_indent="      ") or [""]]
        out = cell[:1]
        for text in cell[1:]:
            parts = textwrap.wrap(text, col_w, subsequent_indent="      ") or [""]
            out += parts[:WRAP - 1] + (["".join(parts[WRAP - 1:])] if len(parts) >= WRAP else [])
        return out

    sep = "+" + "+".join("-" * (w + 2) for w in widths) + "+"
    out = [sep, line(["test", *columns]), sep.replace("-", "=")]
    previous_tall = False
    for n, (label, raw) in enumerate(rows.values()):
        cells = [wrapped(raw.get(c, [])) for c in columns]
        height = max(map(len, cells))
        if n and (previous_tall or height > 1):
            out.append(sep)  # a row of several lines is ruled off; runs of one-line rows stay compact
        previous_tall = height > 1
        out += [line([label if i == 0 else "", *(c[i] if i < len(c) else "" for c in cells)]) for i in range(height)]
    out.append(sep)
    more = len(outcome.rows()) - shown
    if more > 0:
        out.append(f"... {more} more cases not shown (write them all with -o results.html or .csv)")
    return "\n".join(out)


def failures(outcome: Any, *, errors_only: bool = False) -> str:
    """`--verbose`: each case that did not pass, in the words `pytest evalrun.yaml` gives it (`failure_text`: every
    failing assertion with its graded claims, verdicts and evidence, the output, the vars, an error's whole text);
    `errors_only` (`--debug`): the ERROR cases."""
    parts = [f"--- {rec.get('status', '').upper()} {case_label(rec, WHOLE)}\n{failure_text(rec)}"
             for rec in outcome.iter_results()
             if rec.get("status") != "pass" and (rec.get("status") == "error" or not errors_only)]
    return "\n\n".join(parts)


def headline(s: dict[str, Any]) -> str:
    """`2 passed, 1 failed, 1 error of 4 cases (50.00% pass rate) in 0.12s` of a run summary."""
    rate = f"{s['pass_rate']:.2f}%" if s.get("pass_rate") is not None else "n/a"
    return (f"{s['passed']} passed, {s['failed']} failed, {s['errors']} error{'s' if s['errors'] != 1 else ''} of "
            f"{s['total']} case{'s' if s['total'] != 1 else ''} ({rate} pass rate) in {s['duration_s']:.2f}s")


def summary(outcome: Any) -> str:
    s: dict[str, Any] = outcome.summary
    lines = ["Results: " + headline(s)]
    if s["resumed"]:
        lines[0] += f"; {s['resumed']} resumed from the previous run"
    pt, gt = s["tokens"]["provider"], s["tokens"]["grader"]
    tokens = f"Tokens: provider {pt['total']:,} (prompt {pt['prompt']:,}, completion {pt['completion']:,})"
    if s["cached"]:
        tokens += f", {s['cached']} cached responses"
    tokens += f"; grader {gt['total']:,}"
    cost = s["cost"]
    if cost["provider"] is not None or cost["grader"]:
        tokens += f". Cost: provider ${cost['provider'] or 0:.4f}, grader ${cost['grader']:.4f}"
    lines.append(tokens)
    named = {**s.get("metrics", {}), **s.get("derived_metrics", {})}
    if named:
        lines.append("Metrics: " + ", ".join(
            f"{k} {v:.2f}" if isinstance(v, (int, float)) else f"{k} n/a" for k, v in named.items()))
    graded = s.get("graded")
    if graded:
        lines.append("Graded means: " + ", ".join(
            f"{name} {g['mean']:.2f}{' (lower is better)' if g.get('lower_is_better') else ''} "
            f"[{g['passed']}/{g['count']} passed]" for name, g in graded.items()))
    graders = s["graders"]
    if not graders:
        lines.append("Graded by: no graded assertions in this run")
    else:
        hint = " — set --grader MODEL for an LLM grader" if all(g.startswith("builtin") for g in graders) else ""
        lines.append("Graded by " + ", ".join(graders) + hint)
    rep = s.get("repeats")
    if rep:
        text = f"Repeats: {rep['repeat']} runs of each of {rep['groups']} cases; "
        if rep["flaky_count"]:
            flaky = "; ".join(f"{f['label']} ({f['passed']}/{f['runs']} passed)" for f in rep["flaky"][:10])
            more = rep["flaky_count"] - min(10, len(rep["flaky"]))
            text += f"{rep['flaky_count']} flaky: {flaky}" + (f"; and {more} more" if more > 0 else "")
        else:
            text += "none flaky"
        lines.append(text)
    if s["interrupted"]:
        lines.append("Interrupted: finished cases are kept; continue with the same command and --resume")
    return "\n".join(lines)
