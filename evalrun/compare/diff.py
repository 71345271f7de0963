"""Run A vs run B per case (its repeats) and rolled up per provider x prompt, test and metric (rules:
docs/compare.md); pure: records in, a Diff, its JSON form, as text and Markdown."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, fields
from functools import cached_property
from typing import Any

from evalrun.compare import match
from evalrun.report.console import md_cell
from evalrun.run.tally import GroupStats, group_key, group_label, lower_names, mean_ci, score_names, wilson

EPS = 1e-9
MAX_CASES = 50  # cases listed per kind of change in the text and Markdown forms


@dataclass
class Side(GroupStats):
    """One case's results on one side (its repeats), and of its first repeat the status and graded claims."""

    status: str = ""
    error: str | None = None
    claims: list[tuple[str, dict[str, str | None]]] = field(default_factory=list)  # (assertion, {claim: verdict})
    lower: set[str] = field(default_factory=set)  # names whose lower score is better (result `lower_is_better`)

    @classmethod
    def of(cls, recs: list[dict[str, Any]]) -> Side:
        first = recs[0]
        pairs = zip(score_names(first), first.get("assertions") or [], strict=True)
        claims = [(name, {str(c["text"]): c.get("verdict") for c in a["claims"]}) for (name, _), a in pairs
                  if a.get("claims")]
        side = cls(group_key(first), group_label(first), status=str(first.get("status")), claims=claims)
        for r in recs:
            side.add(r)
            side.lower |= lower_names(r)
            if side.error is None and r.get("status") == "error":
                side.error = str(r.get("error"))
        return side

    @cached_property
    def score(self) -> tuple[float, float, float] | None:
        """Mean and 95% interval of the case score."""
        return mean_ci(self.scores) if self.scores else None

    @cached_property
    def names(self) -> dict[str, tuple[float, float, float]]:
        """Mean and 95% interval of each assertion's score, by name (`tally.score_names`)."""
        return {k: mean_ci(v) for k, v in self.by_name.items()}

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"runs": self.n, "passed": self.passed, "errors": self.errors, "status": self.status}
        if self.n > 1:
            lo, hi = wilson(self.passed, self.n)
            out["pass_rate"], out["pass_rate_ci"] = round(self.passed / self.n, 4), [round(lo, 4), round(hi, 4)]
        if self.score is not None:
            out["score"] = round(self.score[0], 4)
            if self.n > 1:
                out["score_ci"] = [round(self.score[1], 4), round(self.score[2], 4)]
        if self.error:
            out["error"] = self.error
        return out


def _dropped(a: tuple[float, float, float], b: tuple[float, float, float], tol: float) -> bool:
    """B's mean is below A's beyond the tolerance, and B's interval lies below A's (mean, lo, hi)."""
    return b[0] < a[0] - tol - EPS and b[2] < a[1] - EPS


def verdict(a: Side, b: Side, tol: float) -> str:
    """newly_failing | newly_passing | new_error | changed | noise | unchanged."""
    if b.errors and not a.errors:
        return "new_error"
    if a.n == 1 and b.n == 1:
        if a.status == b.status:
            return "unchanged"
        if b.status == "pass":
            return "newly_passing"
        return "newly_failing" if a.status == "pass" else "changed"
    (alo, ahi), (blo, bhi) = wilson(a.passed, a.n), wilson(b.passed, b.n)
    rate_a, rate_b = a.passed / a.n, b.passed / b.n  # a side holds at least one run
    if rate_b < rate_a - tol - EPS and bhi < alo:
        return "newly_failing"
    if rate_b > rate_a + tol + EPS and blo > ahi:
        return "newly_passing"
    return "noise" if abs(rate_a - rate_b) > EPS or a.errors != b.errors else "unchanged"


@dataclass
class CaseDiff:
    label: str
    provider: str
    prompt_pair: int
    test_index: int
    kind: str  # a verdict(), or "added" / "removed"
    a: Side | None
    b: Side | None
    record_b: dict[str, Any]  # for reports: the first repeat of B (or A when removed)
    record_a: dict[str, Any] | None  # the first repeat of A
    score_delta: float | None = None
    score_regressed: bool = False
    score_improved: bool = False
    metric_deltas: list[dict[str, Any]] = field(default_factory=list)
    claim_flips: list[dict[str, Any]] = field(default_factory=list)
    vars_changed: bool = False  # matched by position within its test because its vars were edited

    @property
    def regression(self) -> bool:
        return self.kind in ("newly_failing", "new_error") or self.score_regressed or \
            any(m["regressed"] for m in self.metric_deltas)

    @property
    def changed(self) -> bool:
        return self.kind != "unchanged" or bool(self.score_delta) or bool(self.claim_flips) or \
            any(m["delta"] for m in self.metric_deltas)

    def as_dict(self) -> dict[str, Any]:
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in ("record_a", "record_b")}
        return {**out, "regression": self.regression, "a": self.a.as_dict() if self.a else None,
                "b": self.b.as_dict() if self.b else None,
                "score_delta": None if self.score_delta is None else round(self.score_delta, 4)}


def claim_flips(a: Side, b: Side) -> list[dict[str, Any]]:
    """Claims present on both sides (same assertion) whose verdict changed."""
    b_claims = dict(b.claims)
    return [{"assertion": name, "claim": text, "a": va, "b": b_claims[name][text]}
            for name, claims_a in a.claims if name in b_claims
            for text, va in claims_a.items() if text in b_claims[name] and b_claims[name][text] != va]


def metric_delta(name: str, a: tuple[float, float, float], b: tuple[float, float, float], tol: float,
                 lower: bool) -> dict[str, Any]:
    """One assertion's score A -> B; `regressed` / `improved` read it in its direction (`lower`: a rise is worse)."""
    fell, rose = _dropped(a, b, tol), _dropped(b, a, tol)
    out: dict[str, Any] = {"name": name, "a": round(a[0], 4), "b": round(b[0], 4), "delta": round(b[0] - a[0], 4),
                           "regressed": rose if lower else fell, "improved": fell if lower else rose}
    if lower:
        out["lower_is_better"] = True
    return out


def case_diff(key: match.Key, recs_a: list[dict[str, Any]] | None, recs_b: list[dict[str, Any]] | None,
              tol: float) -> CaseDiff:
    ref = (recs_b or recs_a or [{}])[0]
    a = Side.of(recs_a) if recs_a else None
    b = Side.of(recs_b) if recs_b else None
    kind = "added" if a is None else "removed" if b is None else verdict(a, b, tol)
    d = CaseDiff(group_label(ref), str(ref.get("provider")), key[3], int(ref.get("test_index") or 0), kind, a, b,
                 ref, recs_a[0] if recs_a else None)
    if a is None or b is None:
        return d
    if a.score is not None and b.score is not None:
        d.score_delta = b.score[0] - a.score[0]
        d.score_regressed, d.score_improved = _dropped(a.score, b.score, tol), _dropped(b.score, a.score, tol)
    d.metric_deltas = [metric_delta(name, sa, b.names[name], tol, name in a.lower or name in b.lower)
                       for name, sa in a.names.items() if name in b.names]
    d.claim_flips = claim_flips(a, b)
    return d


@dataclass
class Diff:
    prompts: list[match.PromptPair]
    cases: list[CaseDiff]
    tolerance: float

    def counts(self) -> dict[str, int]:
        kinds = Counter(c.kind for c in self.cases)
        return {"matched": len(self.cases) - kinds["added"] - kinds["removed"],
                **{k: kinds[k] for k in ("added", "removed", "newly_failing", "newly_passing", "new_error", "changed",
                                         "noise")},
                "score_regressed": sum(c.score_regressed for c in self.cases),
                "score_improved": sum(c.score_improved for c in self.cases),
                "claim_flips": sum(len(c.claim_flips) for c in self.cases),
                "regressions": sum(c.regression for c in self.cases),
                "prompts_changed": sum(p.text_changed for p in self.prompts)}


def compare(records_a: list[dict[str, Any]], records_b: list[dict[str, Any]], *, tolerance: float = 0.0) -> Diff:
    pairs = match.pair_prompts(match.prompts_of(records_a), match.prompts_of(records_b))
    ga = match.group(records_a, {p.a.key: n for n, p in enumerate(pairs) if p.a is not None})
    gb = match.group(records_b, {p.b.key: n for n, p in enumerate(pairs) if p.b is not None})
    renamed = match.pair_leftovers(ga, gb)  # same test, provider and prompt, edited vars
    cases = []
    for k in ga:
        kb = k if k in gb else renamed.get(k)
        cases.append(case_diff(kb or k, ga[k], gb.get(kb) if kb else None, tolerance))
        cases[-1].vars_changed = kb is not None and kb != k
    paired_b = set(renamed.values())
    cases += [case_diff(k, None, recs, tolerance) for k, recs in gb.items() if k not in ga and k not in paired_b]
    return Diff(pairs, cases, tolerance)


def _mean(values: list[float]) -> float | None:
    return round(sum(values) / len(values), 4) if values else None


def _delta(a: float | None, b: float | None) -> float | None:
    return round(b - a, 4) if a is not None and b is not None else None


def _level(cases: list[CaseDiff]) -> dict[str, Any]:
    """Pass rates and mean case scores of A and B over these cases, and the verdict changes among them."""
    out: dict[str, Any] = {}
    for side in ("a", "b"):
        sides = [getattr(c, side) for c in cases if getattr(c, side) is not None]
        runs = sum(s.n for s in sides)
        out[f"pass_rate_{side}"] = round(sum(s.passed for s in sides) / runs, 4) if runs else None
        out[f"score_{side}"] = _mean([s.score[0] for s in sides if s.score is not None])
        out[f"cases_{side}"] = len(sides)
    for kind in ("newly_failing", "newly_passing", "new_error"):
        out[kind] = sum(c.kind == kind for c in cases)
    out["regressions"] = sum(c.regression for c in cases)
    out["pass_rate_delta"] = _delta(out["pass_rate_a"], out["pass_rate_b"])
    out["score_delta"] = _delta(out["score_a"], out["score_b"])
    return out


def by_metric(diff: Diff) -> list[dict[str, Any]]:
    """Per assertion name (tally.score_names): mean score on each side, cases that got worse / better."""
    means: dict[str, tuple[list[float], list[float]]] = {}
    rows: dict[str, dict[str, Any]] = {}
    for c in diff.cases:
        for i, side in enumerate((c.a, c.b)):
            if side is None:
                continue
            for name, (mean, _lo, _hi) in side.names.items():
                means.setdefault(name, ([], []))[i].append(mean)
                row = rows.setdefault(name, {"name": name, "cases_regressed": 0, "cases_improved": 0})
                if name in side.lower:
                    row["lower_is_better"] = True
        for m in c.metric_deltas:
            rows[m["name"]]["cases_regressed"] += m["regressed"]
            rows[m["name"]]["cases_improved"] += m["improved"]
    for name, (a, b) in means.items():
        rows[name].update(score_a=_mean(a), score_b=_mean(b), delta=_delta(_mean(a), _mean(b)))
    return list(rows.values())


def as_dict(diff: Diff, a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """The JSON output of `evalrun compare` (docs/compare.md)."""
    by_pair: dict[tuple[str, int], list[CaseDiff]] = {}
    by_test: dict[int, list[CaseDiff]] = {}
    for c in diff.cases:
        by_pair.setdefault((c.provider, c.prompt_pair), []).append(c)
        by_test.setdefault(c.test_index, []).append(c)
    return {"a": a, "b": b, "tolerance": diff.tolerance, "summary": diff.counts(),
            "prompts": [p.as_dict() for p in diff.prompts],
            "cases": [c.as_dict() for c in diff.cases if c.changed],
            "by_provider_prompt": [{"provider": provider, "prompt": diff.prompts[pair].label, "prompt_pair": pair,
                                    "prompt_text_changed": diff.prompts[pair].text_changed, **_level(cases)}
                                   for (provider, pair), cases in by_pair.items()],
            "by_test": [{"test_index": i, "description": cases[0].record_b.get("description"), **_level(cases)}
                        for i, cases in sorted(by_test.items())],
            "by_metric": by_metric(diff)}


_KIND_TEXT = {"noise": "within noise", "unchanged": "score changed"}  # else the kind, in words


def _num(v: Any, signed: bool = False) -> str:
    return "–" if v is None else f"{v:+.2f}" if signed else f"{v:.2f}"


def _pct(v: Any) -> str:
    return "–" if v is None else f"{100 * v:.0f}%"


def side_text(s: dict[str, Any] | None) -> str:
    """A case's result on one side (Side.as_dict): its status, or its passes with their interval over repeats."""
    if s is None:
        return "–"
    if s["runs"] > 1:
        lo, hi = s["pass_rate_ci"]
        return f"{s['passed']}/{s['runs']} passed [{_pct(lo)}–{_pct(hi)}]"
    return s["status"]


def _case_line(c: dict[str, Any]) -> str:
    kind = _KIND_TEXT.get(c["kind"], c["kind"].replace("_", " "))
    text = f"{kind}: {c['label']}: {side_text(c['a'])} -> {side_text(c['b'])}"
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
              str(r["newly_failing"]), str(r["newly_passing"]), str(r["new_error"])]
             for r in data["by_provider_prompt"]]
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
        lines += ["  " + "  ".join(x.ljust(w) for x, w in zip(row, widths, strict=True)).rstrip()
                  for row in (head, *rows)]
    lines.append(_verdict(data))
    return "\n".join(lines)


def _metric_name(m: dict[str, Any]) -> str:
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
