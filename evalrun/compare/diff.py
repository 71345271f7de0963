"""Run A vs run B, per case (a group of repeats) and rolled up per provider x prompt, test and metric (rules:
docs/compare.md). With repeats, a change counts only when the 95% intervals do not overlap; an assertion's
score is read in its own direction (`lower_is_better`). Pure: records in, a Diff and its JSON form out."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from evalrun.compare import match
from evalrun.run.repeats import group_label, lower_names, mean_ci, score_names, wilson

EPS = 1e-9


@dataclass
class Side:
    """One case's results on one side (its repeats)."""

    n: int
    passed: int
    errors: int
    status: str  # of the first repeat
    score: tuple[float, float, float] | None  # mean, lo, hi
    names: dict[str, tuple[float, float, float]]
    error: str | None
    claims: list[tuple[str, dict[str, str | None]]]  # (assertion name, {claim text: verdict}) of repeat 0
    lower: set[str] = field(default_factory=set)  # names whose lower score is better (result `lower_is_better`)

    @classmethod
    def of(cls, recs: list[dict[str, Any]]) -> Side:
        scores = [float(r["score"]) for r in recs if isinstance(r.get("score"), (int, float))]
        by_name: dict[str, list[float]] = {}
        lower: set[str] = set()
        for r in recs:
            lower |= lower_names(r)
            for name, value in score_names(r):
                if value is not None:
                    by_name.setdefault(name, []).append(float(value))
        first = recs[0]
        claims = []
        for name_score, a in zip(score_names(first), first.get("assertions") or [], strict=True):
            if a.get("claims"):
                claims.append((name_score[0], {str(c["text"]): c.get("verdict") for c in a["claims"]}))
        error = next((str(r.get("error")) for r in recs if r.get("status") == "error"), None)
        return cls(n=len(recs), passed=sum(r.get("status") == "pass" for r in recs),
                   errors=sum(r.get("status") not in ("pass", "fail") for r in recs), status=str(first.get("status")),
                   score=mean_ci(scores) if scores else None,
                   names={k: mean_ci(v) for k, v in by_name.items()}, error=error, claims=claims, lower=lower)

    @property
    def rate(self) -> float:
        return self.passed / self.n if self.n else 0.0

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"runs": self.n, "passed": self.passed, "errors": self.errors, "status": self.status}
        if self.n > 1:
            lo, hi = wilson(self.passed, self.n)
            out["pass_rate"], out["pass_rate_ci"] = round(self.rate, 4), [round(lo, 4), round(hi, 4)]
        if self.score is not None:
            out["score"] = round(self.score[0], 4)
            if self.n > 1:
                out["score_ci"] = [round(self.score[1], 4), round(self.score[2], 4)]
        if self.error:
            out["error"] = self.error
        return out


def _dropped(a: tuple[float, float, float], b: tuple[float, float, float], tol: float) -> bool:
    return b[0] < a[0] - tol - EPS and b[2] < a[1] - EPS


def _rose(a: tuple[float, float, float], b: tuple[float, float, float], tol: float) -> bool:
    return _dropped(b, a, tol)


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
    if b.rate < a.rate - tol - EPS and bhi < alo:
        return "newly_failing"
    if b.rate > a.rate + tol + EPS and blo > ahi:
        return "newly_passing"
    return "noise" if abs(a.rate - b.rate) > EPS or a.errors != b.errors else "unchanged"


@dataclass
class CaseDiff:
    key: match.Key
    label: str
    provider: str
    prompt_pair: int
    test_index: int
    kind: str  # a verdict(), or "added" / "removed"
    a: Side | None
    b: Side | None
    score_delta: float | None = None
    score_regressed: bool = False
    score_improved: bool = False
    metric_deltas: list[dict[str, Any]] = field(default_factory=list)
    claim_flips: list[dict[str, Any]] = field(default_factory=list)
    record_b: dict[str, Any] | None = None  # for reports: the first repeat of B (or A when removed)
    record_a: dict[str, Any] | None = None  # the first repeat of A
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
        return {"label": self.label, "provider": self.provider, "test_index": self.test_index,
                "prompt_pair": self.prompt_pair, "kind": self.kind, "regression": self.regression,
                "a": self.a.as_dict() if self.a else None, "b": self.b.as_dict() if self.b else None,
                "score_delta": None if self.score_delta is None else round(self.score_delta, 4),
                "score_regressed": self.score_regressed, "score_improved": self.score_improved,
                "metric_deltas": self.metric_deltas, "claim_flips": self.claim_flips,
                "vars_changed": self.vars_changed}


def claim_flips(a: Side, b: Side) -> list[dict[str, Any]]:
    """Claims present on both sides (same assertion) whose verdict changed."""
    flips = []
    b_claims = dict(b.claims)
    for name, claims_a in a.claims:
        claims_b = b_claims.get(name)
        if claims_b is None:
            continue
        for text, va in claims_a.items():
            vb = claims_b.get(text)
            if text in claims_b and vb != va:
                flips.append({"assertion": name, "claim": text, "a": va, "b": vb})
    return flips


def metric_delta(name: str, a: tuple[float, float, float], b: tuple[float, float, float], tol: float,
                 lower: bool) -> dict[str, Any]:
    """One assertion's score A -> B. `regressed` / `improved` follow its direction: for a lower-is-better
    metric (noise-sensitivity, hallucination, ...) a rise beyond the tolerance (and the noise) is the regression."""
    worse, better = (_rose(a, b, tol), _dropped(a, b, tol)) if lower else (_dropped(a, b, tol), _rose(a, b, tol))
    out: dict[str, Any] = {"name": name, "a": round(a[0], 4), "b": round(b[0], 4), "delta": round(b[0] - a[0], 4),
                           "regressed": worse, "improved": better}
    if lower:
        out["lower_is_better"] = True
    return out


def case_diff(key: match.Key, recs_a: list[dict[str, Any]] | None, recs_b: list[dict[str, Any]] | None,
              tol: float) -> CaseDiff:
    ref = (recs_b or recs_a or [{}])[0]
    a = Side.of(recs_a) if recs_a else None
    b = Side.of(recs_b) if recs_b else None
    kind = "added" if a is None else "removed" if b is None else verdict(a, b, tol)
    d = CaseDiff(key, group_label(ref), str(ref.get("provider")), int(key[3]) if isinstance(key[3], int) else -1,
                 int(ref.get("test_index") or 0), kind, a, b, record_b=ref, record_a=recs_a[0] if recs_a else None)
    if a is None or b is None:
        return d
    if a.score is not None and b.score is not None:
        d.score_delta = b.score[0] - a.score[0]
        d.score_regressed, d.score_improved = _dropped(a.score, b.score, tol), _rose(a.score, b.score, tol)
    for name, sa in a.names.items():
        sb = b.names.get(name)
        if sb is not None:
            d.metric_deltas.append(metric_delta(name, sa, sb, tol, name in a.lower or name in b.lower))
    d.claim_flips = claim_flips(a, b)
    return d


@dataclass
class Diff:
    prompts: list[match.PromptPair]
    cases: list[CaseDiff]
    tolerance: float

    def counts(self) -> dict[str, int]:
        out = dict.fromkeys(("matched", "added", "removed", "newly_failing", "newly_passing", "new_error",
                             "changed", "noise", "score_regressed", "score_improved", "claim_flips",
                             "regressions", "prompts_changed"), 0)
        for c in self.cases:
            out["matched"] += c.kind not in ("added", "removed")
            if c.kind in out:
                out[c.kind] += 1
            out["score_regressed"] += c.score_regressed
            out["score_improved"] += c.score_improved
            out["claim_flips"] += len(c.claim_flips)
            out["regressions"] += c.regression
        out["prompts_changed"] = sum(p.text_changed for p in self.prompts)
        return out


def compare(records_a: list[dict[str, Any]], records_b: list[dict[str, Any]], *, tolerance: float = 0.0) -> Diff:
    pairs = match.pair_prompts(match.prompts_of(records_a), match.prompts_of(records_b))
    ids_a, ids_b = match.pair_ids(pairs)
    ga, gb = match.group(records_a, ids_a), match.group(records_b, ids_b)
    renamed = match.pair_leftovers(ga, gb)  # same test, provider and prompt, edited vars
    cases = []
    for k in ga:
        kb = k if k in gb else renamed.get(k)
        d = case_diff(kb or k, ga[k], gb.get(kb) if kb else None, tolerance)
        d.vars_changed = kb is not None and kb != k
        cases.append(d)
    paired_b = set(renamed.values())
    cases += [case_diff(k, None, recs, tolerance) for k, recs in gb.items() if k not in ga and k not in paired_b]
    return Diff(pairs, cases, tolerance)


KINDS = ("newly_failing", "newly_passing", "new_error")


def _mean(values: list[float]) -> float | None:
    return round(sum(values) / len(values), 4) if values else None


def _bucket(cases: list[CaseDiff], key: Callable[[CaseDiff], Any]) -> dict[Any, list[CaseDiff]]:
    out: dict[Any, list[CaseDiff]] = {}
    for c in cases:
        out.setdefault(key(c), []).append(c)
    return out


def _level(cases: list[CaseDiff]) -> dict[str, Any]:
    """Pass rates and mean case scores of A and B over these cases, and the verdict changes among them."""
    out: dict[str, Any] = {}
    for side in ("a", "b"):
        sides = [getattr(c, side) for c in cases if getattr(c, side) is not None]
        runs = sum(s.n for s in sides)
        out[f"pass_rate_{side}"] = round(sum(s.passed for s in sides) / runs, 4) if runs else None
        out[f"score_{side}"] = _mean([s.score[0] for s in sides if s.score is not None])
        out[f"cases_{side}"] = len(sides)
    for kind in KINDS:
        out[kind] = sum(c.kind == kind for c in cases)
    out["regressions"] = sum(c.regression for c in cases)
    pa, pb = out["pass_rate_a"], out["pass_rate_b"]
    out["pass_rate_delta"] = round(pb - pa, 4) if pa is not None and pb is not None else None
    sa, sb = out["score_a"], out["score_b"]
    out["score_delta"] = round(sb - sa, 4) if sa is not None and sb is not None else None
    return out


def prompt_name(diff: Diff, pair: int) -> str:
    if 0 <= pair < len(diff.prompts):
        p = diff.prompts[pair]
        info = p.b or p.a
        if info is not None:
            return info.label
    return "?"


def by_provider_prompt(diff: Diff) -> list[dict[str, Any]]:
    rows = []
    for (provider, pair), cases in _bucket(diff.cases, lambda c: (c.provider, c.prompt_pair)).items():
        p = diff.prompts[pair] if 0 <= pair < len(diff.prompts) else None
        rows.append({"provider": provider, "prompt": prompt_name(diff, pair), "prompt_pair": pair,
                     "prompt_text_changed": bool(p and p.text_changed), **_level(cases)})
    return rows


def by_test(diff: Diff) -> list[dict[str, Any]]:
    rows = []
    for test_index, cases in sorted(_bucket(diff.cases, lambda c: c.test_index).items()):
        ref = cases[0].record_b or {}
        rows.append({"test_index": test_index, "description": ref.get("description"), **_level(cases)})
    return rows


def by_metric(diff: Diff) -> list[dict[str, Any]]:
    """Per assertion name (its metric, else type[index]): mean score on each side, and the cases whose score
    got worse / better in the metric's direction (`lower_is_better` marks a metric whose rise is worse)."""
    acc: dict[str, dict[str, Any]] = {}
    for c in diff.cases:
        for side_name in ("a", "b"):
            side = getattr(c, side_name)
            if side is None:
                continue
            for name, (mean, _lo, _hi) in side.names.items():
                v = acc.setdefault(name, {"a": [], "b": [], "regressed": 0, "improved": 0, "lower": False})
                v[side_name].append(mean)
                v["lower"] = v["lower"] or name in side.lower
        for m in c.metric_deltas:
            acc[m["name"]]["regressed"] += m["regressed"]
            acc[m["name"]]["improved"] += m["improved"]
    rows = []
    for name, v in acc.items():
        ma, mb = _mean(v["a"]), _mean(v["b"])
        row = {"name": name, "score_a": ma, "score_b": mb,
               "delta": round(mb - ma, 4) if ma is not None and mb is not None else None,
               "cases_regressed": v["regressed"], "cases_improved": v["improved"]}
        if v["lower"]:
            row["lower_is_better"] = True
        rows.append(row)
    return rows


def prompts(diff: Diff) -> list[dict[str, Any]]:
    def info(p: Any) -> dict[str, Any] | None:
        return None if p is None else {"index": p.index, "label": p.label, "sha": p.sha}

    return [{"a": info(p.a), "b": info(p.b), "text_changed": p.text_changed} for p in diff.prompts]


def as_dict(diff: Diff, a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """The JSON output of `evalrun compare` (docs/compare.md)."""
    return {"a": a, "b": b, "tolerance": diff.tolerance, "summary": diff.counts(), "prompts": prompts(diff),
            "cases": [c.as_dict() for c in diff.cases if c.changed],
            "by_provider_prompt": by_provider_prompt(diff), "by_test": by_test(diff), "by_metric": by_metric(diff)}
