"""Human labels next to a suite: the template a person fills in, reading the filled file (CSV or JSONL), and
matching each label to a result of a run by a stable key that survives edits to the suite.

A label names its case by `case` (a result's `id`: a hash of the test's position, vars, provider, prompt and
repeat) and, as the template writes them, `description`, `vars_digest`, `provider` and `prompt`. A label whose id
is no longer in the run (the test moved) is matched by description + vars digest (+ provider and prompt when
given; a test without a description by its vars digest alone); a label matching nothing, or more than one case, is
reported with why, never dropped silently. Its `assertion` is the assertion's `metric` name or its type
(`faithfulness`, `not-faithfulness`).
"""

from __future__ import annotations

import csv
import hashlib
import json
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from evalrun.errors import UsageError

COLUMNS = ("case", "description", "vars_digest", "provider", "prompt", "assertion", "grader", "score", "threshold",
           "verdict", "output", "claims", "evidence", "human", "note")
HUMAN = {"pass": True, "fail": False}
LABEL_HINT = ("a labels file is CSV or JSONL with `case` (or `description`), `assertion` and `human` (pass or fail); "
              "write one with `evalrun calibrate --template RESULTS -o labels.csv`")


def _stripped(value: Any) -> Any:
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, dict):
        return {str(k): _stripped(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_stripped(v) for v in value]
    return value


def vars_digest(variables: Any) -> str:
    """12 hex digits of the vars as canonical JSON (strings stripped: test-file readers differ on a trailing line
    break): tells a changed var from a moved test."""
    text = json.dumps(_stripped(variables), sort_keys=True, ensure_ascii=False, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def graded_assertions(rec: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(metric key, assertion) of each graded assertion of a record (assert-set children included) that has a
    score: the key is its `metric` name, else its type."""
    stack = list(rec.get("assertions") or [])
    while stack:
        a = stack.pop(0)
        stack[:0] = list(a.get("children") or [])
        if a.get("grader") and isinstance(a.get("score"), (int, float)) and not a.get("error"):
            yield str(a.get("metric") or a.get("type")), a


def claims_text(a: dict[str, Any]) -> tuple[str, str]:
    """(the claims the grader judged, with verdicts; the evidence it cited) of a graded assertion, as text."""
    details = a.get("details") or {}
    context = details.get("context") or []
    claims = details.get("claims") or []
    lines, cited = [], []
    for c in claims if isinstance(claims, list) else []:
        if not isinstance(c, dict):
            continue
        support = c.get("support")
        lines.append(f"[{c.get('verdict', '?')}{'' if support is None else f' {support:.2f}'}] {c.get('text', '')}"
                     + (f" ({c['reason']})" if c.get("reason") else ""))
        for i in c.get("evidence") or []:
            if isinstance(i, int) and 0 <= i < len(context) and i not in cited:
                cited.append(i)
    evidence = " | ".join(str(context[i]) for i in cited)
    return ("\n".join(lines) or str(a.get("reason") or "")), evidence


def deciding_claim(a: dict[str, Any]) -> tuple[str, str]:
    """(the claim that weighed most on a graded verdict: the least supported one; the evidence it was judged
    against), or the reason and "" when the grader recorded no claims."""
    details = a.get("details") or {}
    context = details.get("context") or []
    claims = [c for c in details.get("claims") or [] if isinstance(c, dict)]
    if not claims:
        return str(a.get("reason") or ""), ""
    rank = {"contradicted": 0, "unsupported": 1}
    c = min(claims, key=lambda c: (rank.get(str(c.get("verdict")), 2),
                                   c["support"] if isinstance(c.get("support"), (int, float)) else 1.0))
    support = c.get("support")
    text = f"[{c.get('verdict', '?')}{'' if support is None else f' {support:.2f}'}] {c.get('text', '')}" + \
        (f" ({c['reason']})" if c.get("reason") else "")
    cited = [context[i] for i in c.get("evidence") or [] if isinstance(i, int) and 0 <= i < len(context)]
    return text, " | ".join(map(str, cited))


def template_rows(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per graded assertion of each (first-repeat) result, `human` and `note` empty, in the suite's order
    (a results file lists cases as they finished: a template, and its seeded sample, must not depend on that)."""
    rows = []
    for rec in sorted(records, key=lambda r: int(r.get("index") or 0)):
        if rec.get("repeat"):
            continue
        for key, a in graded_assertions(rec):
            claims, evidence = claims_text(a)
            rows.append({"case": rec["id"], "description": rec.get("description") or "",
                         "vars_digest": vars_digest(rec.get("vars") or {}), "provider": rec.get("provider") or "",
                         "prompt": rec.get("prompt_label") or "", "assertion": key, "grader": a.get("grader"),
                         "score": round(float(a["score"]), 4), "threshold": a.get("threshold"),
                         "verdict": "pass" if a.get("pass") else "fail", "output": rec.get("output") or "",
                         "claims": claims, "evidence": evidence, "human": "", "note": ""})
    return rows


def sample(rows: Sequence[dict[str, Any]], n: int | None, seed: int) -> list[dict[str, Any]]:
    """`n` rows stratified by score: the rows sorted by score cut into n equal strata, one drawn from each (`seed`),
    so low, middle and high scores are all labelled; all rows when n is None or not smaller."""
    if n is None or n >= len(rows):
        return list(rows)
    order = sorted(range(len(rows)), key=lambda i: (rows[i]["score"], i))
    rng = np.random.default_rng(seed)
    edges = np.linspace(0, len(order), n + 1).round().astype(int)
    picked = [order[int(rng.integers(lo, hi))] for lo, hi in zip(edges[:-1], edges[1:], strict=True) if hi > lo]
    return [rows[i] for i in sorted(picked)]


def write_template(rows: Sequence[dict[str, Any]], path: Path) -> None:
    """CSV (default) or JSONL (by the extension `.jsonl`)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as f:
        if path.suffix.lower() == ".jsonl":
            for r in rows:
                f.write(json.dumps(r, ensure_ascii=False) + "\n")
        else:
            w = csv.DictWriter(f, fieldnames=COLUMNS)
            w.writeheader()
            w.writerows(rows)


@dataclass(frozen=True)
class Label:
    """One filled-in label row (`where`: file:line)."""

    where: str
    human: bool
    assertion: str
    case: str = ""
    description: str = ""
    vars_digest: str = ""
    provider: str = ""
    prompt: str = ""
    note: str = ""


def _label(row: dict[str, Any], where: str) -> Label | None:
    """A Label, or None for a row not filled in yet (empty `human`); UsageError naming `where` for a bad one."""
    human = str(row.get("human") or "").strip().lower()
    if not human:
        return None
    if human not in HUMAN:
        raise UsageError(f"{where}: `human` is {row.get('human')!r}", key="human",
                         hint="write pass or fail (or leave it empty for a row not labelled yet)")
    digest = str(row.get("vars_digest") or "")
    if not digest and isinstance(row.get("vars"), (dict, str)) and row.get("vars") != "":
        v = row["vars"]
        try:
            digest = vars_digest(json.loads(v) if isinstance(v, str) else v)
        except ValueError:
            raise UsageError(f"{where}: `vars` is not JSON", key="vars", hint="give the vars as a JSON object, "
                             "or `vars_digest` as the template writes it") from None
    label = Label(where, HUMAN[human], str(row.get("assertion") or "").strip(), str(row.get("case") or "").strip(),
                  str(row.get("description") or ""), digest, str(row.get("provider") or ""),
                  str(row.get("prompt") or ""), str(row.get("note") or ""))
    if not label.assertion:
        raise UsageError(f"{where}: no `assertion`", key="assertion",
                         hint="name the graded assertion: its `metric` name or its type, e.g. faithfulness")
    if not label.case and not label.description:
        raise UsageError(f"{where}: neither `case` nor `description`", key="case", hint=LABEL_HINT)
    return label


def read_labels(path: Path) -> tuple[list[Label], int, str]:
    """(labels filled in, rows left empty, sha256 of the file) of a CSV or JSONL labels file."""
    try:
        data = path.read_bytes()
    except OSError as e:
        raise UsageError(f"cannot read labels {str(path)!r}: {e.strerror or e}", key="--labels",
                         hint=LABEL_HINT) from None
    text = data.decode("utf-8-sig", errors="replace")
    rows: list[tuple[str, dict[str, Any]]] = []
    if path.suffix.lower() in (".jsonl", ".json") or text.lstrip().startswith("{"):
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as e:
                raise UsageError(f"{path}:{n}: not JSON ({e.msg})", key="--labels", hint=LABEL_HINT) from None
            if not isinstance(row, dict):
                raise UsageError(f"{path}:{n}: a label must be a JSON object", key="--labels", hint=LABEL_HINT)
            rows.append((f"{path}:{n}", row))
    else:
        reader = csv.DictReader(text.splitlines(keepends=True))
        if not reader.fieldnames or "human" not in reader.fieldnames:
            raise UsageError(f"{path}:1: no `human` column", key="--labels", hint=LABEL_HINT)
        rows = [(f"{path}:{reader.line_num}", dict(row)) for row in reader]
    labels, empty = [], 0
    for where, row in rows:
        label = _label(row, where)
        if label is None:
            empty += 1
        else:
            labels.append(label)
    return labels, empty, hashlib.sha256(data).hexdigest()


def _no_assertion(name: str, rec: dict[str, Any], graded: int) -> str:
    """Why a label's `assertion` names no single graded, scored assertion of its case."""
    where = f"{name!r} in case {rec['id']}"
    if graded:
        return f"{graded} graded assertions {where}: give them distinct `metric:` names and label each by its name"
    stack = list(rec.get("assertions") or [])
    while stack:
        a = stack.pop(0)
        stack[:0] = list(a.get("children") or [])
        if name in (a.get("metric"), a.get("type")) and a.get("error"):
            return f"{where} has no score to compare: it errored in this run ({str(a['error'])[:80]})"
    return f"no graded assertion {where}"


@dataclass(frozen=True)
class Match:
    label: Label
    record: dict[str, Any] | None
    assertion: dict[str, Any] | None
    how: str  # "id", "description", or why it matched nothing


def match(labels: Sequence[Label], records: Sequence[dict[str, Any]]) -> list[Match]:
    """Each label with its result and assertion, or with the reason it has none."""
    by_id = {r["id"]: r for r in records if not r.get("repeat")}
    by_text: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in by_id.values():
        by_text[r.get("description") or ""].append(r)
    digests: dict[str, str] = {}

    def digest(r: dict[str, Any]) -> str:
        if r["id"] not in digests:
            digests[r["id"]] = vars_digest(r.get("vars") or {})
        return digests[r["id"]]

    out = []
    for label in labels:
        rec, how = by_id.get(label.case), "id"
        if rec is None:  # the test moved (or the label has no id): its description and vars find it
            if not label.description and not label.vars_digest:
                out.append(Match(label, None, None, f"no case {label.case!r} in the run, and no `description` or "
                                 "`vars_digest` to find it by"))
                continue
            same = by_text.get(label.description, [])  # "": the tests without a description
            found = [r for r in same if digest(r) == label.vars_digest] if label.vars_digest else same
            if label.provider:
                found = [r for r in found if r.get("provider") == label.provider]
            if label.prompt:
                found = [r for r in found if r.get("prompt_label") == label.prompt]
            if not found:
                why = ("no case without a description has these vars (changed or removed)" if not label.description
                       else "no case with this description and vars: " + (
                           "its vars changed" if same else "no test has this description (removed or renamed)"))
                out.append(Match(label, None, None, why))
                continue
            if len(found) > 1:
                out.append(Match(label, None, None, f"{len(found)} cases have this description: give `case`, "
                                 "`vars_digest` (or `vars`), `provider` or `prompt`"))
                continue
            rec, how = found[0], "description"
        graded = [a for key, a in graded_assertions(rec) if label.assertion in (key, a.get("type"))]
        if len(graded) != 1:
            out.append(Match(label, rec, None, _no_assertion(label.assertion, rec, len(graded))))
            continue
        out.append(Match(label, rec, graded[0], how))
    return out
