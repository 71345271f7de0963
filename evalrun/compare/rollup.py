"""The diff rolled up per provider x prompt, per test and per metric, and the whole diff as JSON. Pure."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from evalrun.compare.diff import CaseDiff, Diff

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
