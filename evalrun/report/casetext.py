"""One result record -> readable text for test runners (the pytest plugin, `evalrun.testing.check`).

    failure_text(rec)   why a case failed or errored: each failing assertion's reason, with the claims and
                        verdicts of graded ones, then the output (cut) and the vars
    details_text(rec)   every assertion with its reason and graded details (claims, verdicts, chunks)
    brief(a)            one assertion in one line: `faithfulness 0.42 < 0.70: "The refund takes 60 days."
                        contradicted: the claim says 60 where the evidence says 30` (score against threshold,
                        then the claim that decided it, else the reason); the console table's cells
    failed_briefs(rec)  the failing assertions' `score_text`s (the HTML report's score column)

Reads the result records of the results contract (evalrun/run/serialize.py), never CaseResult objects.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

OUTPUT_MAX = 600
TEXT_MAX = 160


def _cut(text: Any, limit: int = TEXT_MAX) -> str:
    s = " ".join(str(text).split())
    return s if len(s) <= limit else s[: limit - 1] + "…"


def _mark(a: dict[str, Any]) -> str:
    if a.get("error"):
        return "ERROR"
    return "PASS" if a.get("pass") else "FAIL"


def _score(a: dict[str, Any]) -> str:
    score = a.get("score")
    return f" (score {score:.3g})" if isinstance(score, (int, float)) and not isinstance(score, bool) else ""


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def score_text(a: dict[str, Any]) -> str:
    """`faithfulness 0.42 < 0.70`: the type (or metric), its score against its threshold in its direction
    (`noise-sensitivity 0.50 > 0.20` for a lower-is-better one); a yes/no check is its type alone."""
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


def deciding_claim(a: dict[str, Any]) -> str | None:
    """The first claim that counted against the assertion, as `"claim" verdict: why` (the evidence quote left
    out); None when no claim did."""
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
        return f'"{_cut(c.get("text", ""), 100)}" {verdict}' + (f": {_cut(why, 80)}" if why else "")
    return None


def brief(a: dict[str, Any]) -> str:
    """One assertion in one line (see the module docstring)."""
    if a.get("error"):
        return f"{a.get('type')}: ERROR {_cut(a['error'], 120)}"
    head = score_text(a)
    claim = deciding_claim(a)
    if claim:
        return f"{head}: {claim}"
    if not a.get("pass") and a.get("reason"):
        reason = _VERDICT_TAIL.sub("", str(a["reason"]))  # the score against the threshold is in `head`
        return f"{head}: {_cut(reason, 120)}"
    return head


def failed_briefs(rec: dict[str, Any]) -> list[str]:
    """The score texts of the assertions that failed or errored the case."""
    return [score_text(a) + (" ERROR" if a.get("error") else "") for a in rec.get("assertions") or []
            if a.get("error") or (not a.get("pass") and (a.get("weight", 1) or 0) > 0)]


def _claim_lines(details: dict[str, Any], indent: str) -> Iterator[str]:
    for c in details.get("claims") or []:
        if not isinstance(c, dict):
            continue
        extra = ""
        if c.get("correct") is not None:
            extra = ", correct" if c.get("correct") else ", incorrect"
        chunks = c.get("chunks")
        if chunks:
            extra += f", chunks {list(chunks)}"
        reason = f" — {_cut(c['reason'], 120)}" if c.get("reason") else ""
        yield f"{indent}- {c.get('verdict', '?')}{extra}: {_cut(c.get('text', ''))!r}{reason}"


def _chunk_lines(details: dict[str, Any], indent: str) -> Iterator[str]:
    for i, ch in enumerate(details.get("chunks") or []):
        if not isinstance(ch, dict) or "level" not in ch:
            continue  # noise-sensitivity's labelled chunks are shown through its claims
        used = ", used" if ch.get("used") else ""
        yield f"{indent}chunk {i}: {ch.get('level')}{used}: {_cut(ch.get('text', ''), 100)!r}"
    missing = details.get("missing")
    if missing:
        yield f"{indent}missing: {', '.join(_cut(m, 80) for m in missing)}"


def _assertion_lines(a: dict[str, Any], indent: str, *, graded_details: bool) -> Iterator[str]:
    text = a.get("error") or a.get("reason") or ""
    grader = f" [grader {a['grader']}]" if a.get("grader") else ""
    yield f"{indent}[{_mark(a)}] {a.get('type')}{_score(a)}{grader}: {text}"
    details = a.get("details") or {}
    if graded_details and isinstance(details, dict):
        yield from _claim_lines(details, indent + "    ")
        yield from _chunk_lines(details, indent + "    ")
    for child in a.get("children") or []:
        yield from _assertion_lines(child, indent + "  ", graded_details=graded_details)


def _vars_text(rec: dict[str, Any]) -> str:
    vars_ = rec.get("vars") or {}
    parts = [f"{k}={_cut(v if isinstance(v, str) else json.dumps(v, default=str), 80)}" for k, v in vars_.items()]
    return ", ".join(parts)


def failure_text(rec: dict[str, Any], *, show_provider: bool = True) -> str:
    """Why the case did not pass: its reason (`ERROR: message` for an error) on the first line, then each
    failing assertion (graded ones with their claims and verdicts), the output, vars, provider and prompt."""
    status = rec.get("status")
    lines: list[str] = []
    if status == "error":
        lines.append(f"ERROR: {rec.get('error') or rec.get('reason') or 'the case could not finish'}")
    else:
        lines.append(str(rec.get("reason") or "an assertion failed"))
    asserts = rec.get("assertions") or []
    bad = [a for a in asserts if a.get("error") or not a.get("pass")]
    for a in bad:
        lines.extend(_assertion_lines(a, "  ", graded_details=True))
    passed = len(asserts) - len(bad)
    if passed:
        lines.append(f"  ({passed} other assertion{'s' if passed != 1 else ''} passed)")
    out = rec.get("output")
    if out is not None:
        s = str(out)
        lines.append("output: " + (s if len(s) <= OUTPUT_MAX else s[:OUTPUT_MAX] + f"… ({len(s)} chars)"))
    if rec.get("vars"):
        lines.append(f"vars: {_vars_text(rec)}")
    if show_provider:
        lines.append(f"provider: {rec.get('provider')}  prompt: {_cut(rec.get('prompt_label') or '', 80)}")
    return "\n".join(lines)


def details_text(rec: dict[str, Any]) -> str:
    """Every assertion with its reason and graded details (claims with verdicts, chunk relevance)."""
    lines = [f"status: {rec.get('status')}  score: {rec.get('score')}  provider: {rec.get('provider')}"]
    for a in rec.get("assertions") or []:
        lines.extend(_assertion_lines(a, "  ", graded_details=True))
    return "\n".join(lines)
