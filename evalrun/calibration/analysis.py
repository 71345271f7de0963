"""The figures of `evalrun calibrate`: per graded metric and grader, the agreement of a run's verdicts and scores
with a person's labels (or with a second run graded by another grader), as plain dicts for text, JSON and the page.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from evalrun.calibration import stats
from evalrun.calibration.labels import Match, claims_text, deciding_claim, graded_assertions

#: Fewer labels than this in either class: no figure is printed as if it were known.
MIN_PER_CLASS = 20


def higher_passes(a: dict[str, Any]) -> bool:
    """A higher recorded score means PASS, except for a lower-is-better result (noise-sensitivity & co.); a
    negated metric's recorded score is already flipped (assertions/engine.py)."""
    return not a.get("lower_is_better")


def yaml_threshold(a: dict[str, Any], threshold: float) -> float:
    """The `threshold:` to write in the suite for a threshold on recorded scores: a negated, higher-is-better
    metric records 1 - score and passes when the raw score is below its threshold."""
    from evalrun.assertions import registry

    kind = str(a.get("type") or "")
    if not kind.startswith("not-"):
        return threshold
    cls = registry.get(kind[4:])
    return threshold if cls is not None and cls.lower_is_better else 1.0 - threshold


def _r(x: float | None, digits: int = 4) -> float | None:
    return None if x is None else round(x, digits)


def _ci(stat: Any, n: int, seed: int) -> list[float] | None:
    found = stats.bootstrap(stat, n, seed=seed)
    return None if found is None else [round(found[0], 4), round(found[1], 4)]


def _item(m: Match) -> dict[str, Any]:
    assert m.record is not None and m.assertion is not None
    claims, _ = claims_text(m.assertion)
    claim, evidence = deciding_claim(m.assertion)
    return {"case": m.record["id"], "description": m.record.get("description"), "score": float(m.assertion["score"]),
            "verdict": bool(m.assertion.get("pass")), "human": m.label.human, "note": m.label.note,
            "threshold": m.assertion.get("threshold"), "claim": claim, "evidence": evidence, "claims": claims,
            "reason": m.assertion.get("reason"), "where": m.label.where, "matched_by": m.how,
            "higher": higher_passes(m.assertion),
            "assertion": m.assertion}


def metric_figures(metric: str, grader: str, items: Sequence[dict[str, Any]], *, seed: int = 0,
                   min_per_class: int = MIN_PER_CLASS) -> dict[str, Any]:
    """Every figure of one metric and grader from its labelled items ({score, verdict, human, higher, ...})."""
    scores = [i["score"] for i in items]
    verdicts = [i["verdict"] for i in items]
    human = [i["human"] for i in items]
    higher = items[0]["higher"]
    n_pass, n_fail = sum(human), len(human) - sum(human)
    out: dict[str, Any] = {
        "metric": metric, "grader": grader, "n": len(items), "n_human_pass": n_pass, "n_human_fail": n_fail,
        "direction": "higher passes" if higher else "lower passes",
        "run_thresholds": sorted({i["threshold"] for i in items if i["threshold"] is not None}),
        "confusion": stats.confusion(verdicts, human), "enough_labels": min(n_pass, n_fail) >= min_per_class,
        "min_per_class": min_per_class}
    keys = ("balanced_accuracy", "kappa", "precision_fail", "recall_fail", "auroc", "suggested_threshold",
            "suggested_yaml_threshold", "oof_balanced_accuracy", "in_sample_balanced_accuracy")
    out.update({k: None for k in keys})
    out.update({f"{k}_ci": None for k in ("balanced_accuracy", "kappa", "precision_fail", "recall_fail", "auroc")})
    out["cv"] = None
    if not out["enough_labels"]:
        out["note"] = (f"too few labels to measure: {n_pass} pass and {n_fail} fail; label at least "
                       f"{min_per_class} of each (the counts above are all that can be said)")
        return out
    out["note"] = None

    def on(idx: list[int]) -> tuple[list[bool], list[bool], list[float]]:
        return [verdicts[i] for i in idx], [human[i] for i in idx], [scores[i] for i in idx]

    verdict_stats = {"balanced_accuracy": stats.balanced_accuracy, "kappa": stats.cohen_kappa,
                     "precision_fail": stats.precision_fail, "recall_fail": stats.recall_fail}
    for k, fn in verdict_stats.items():
        out[k] = _r(fn(verdicts, human))
        out[f"{k}_ci"] = _ci(lambda idx, fn=fn: fn(*on(idx)[:2]), len(items), seed)
    out["auroc"] = _r(stats.auroc(scores, human, higher))
    out["auroc_ci"] = _ci(lambda idx: stats.auroc(on(idx)[2], on(idx)[1], higher), len(items), seed)
    cv = stats.cross_validated_threshold(scores, human, higher, seed=seed)
    if cv is not None:
        out["suggested_threshold"] = _r(cv.threshold, 6)
        out["suggested_yaml_threshold"] = _r(yaml_threshold(items[0]["assertion"], cv.threshold), 6)
        out["oof_balanced_accuracy"] = _r(cv.oof_balanced_accuracy)
        out["in_sample_balanced_accuracy"] = _r(cv.in_sample)
        out["cv"] = {"folds": len(cv.fold_thresholds), "seed": seed,
                     "fold_thresholds": [round(t, 6) for t in cv.fold_thresholds],
                     "fold_of": {items[i]["case"]: f for i, f in enumerate(cv.fold_of)}}
    return out


def _worst_first(items: Sequence[dict[str, Any]], threshold: float | None) -> list[dict[str, Any]]:
    """Items whose verdict differs from the label, the most confidently wrong (farthest from the run's threshold,
    on the scores as recorded: `yaml_threshold` maps either way) first."""
    def distance(i: dict[str, Any]) -> float:
        t = i["threshold"]
        boundary = yaml_threshold(i["assertion"], float(t)) if t is not None else threshold or 0.0
        return abs(i["score"] - boundary)

    return sorted((i for i in items if i["verdict"] != i["human"]), key=lambda i: -distance(i))


def calibrate(matches: Sequence[Match], *, seed: int = 0, min_per_class: int = MIN_PER_CLASS) -> dict[str, Any]:
    """{"metrics": [...], "unmatched": [...], "duplicates": [...]} from matched labels."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    unmatched, duplicates, seen = [], [], set()
    for m in matches:
        if m.assertion is None or m.record is None:
            unmatched.append({"where": m.label.where, "case": m.label.case or None,
                              "description": m.label.description or None, "assertion": m.label.assertion,
                              "why": m.how})
            continue
        key = (m.record["id"], id(m.assertion))
        if key in seen:
            duplicates.append({"where": m.label.where, "case": m.record["id"], "assertion": m.label.assertion})
            continue
        seen.add(key)
        metric = str(m.assertion.get("metric") or m.assertion.get("type"))
        groups[(metric, str(m.assertion.get("grader")))].append(_item(m))
    metrics = []
    for (metric, grader), items in sorted(groups.items()):
        fig = metric_figures(metric, grader, items, seed=seed, min_per_class=min_per_class)
        fig["matched_by_description"] = sum(i["matched_by"] == "description" for i in items)
        fig["disagreements"] = [{k: v for k, v in i.items() if k not in ("assertion", "higher")}
                                for i in _worst_first(items, fig["suggested_threshold"])]  # all: text shows a few
        metrics.append(fig)
    return {"metrics": metrics, "labels_matched": sum(len(v) for v in groups.values()), "unmatched": unmatched,
            "duplicates": duplicates}


def compare_graders(a_records: Sequence[dict[str, Any]], b_records: Sequence[dict[str, Any]], *,
                    seed: int = 0) -> dict[str, Any]:
    """Agreement per metric of two runs of the same suite graded by two graders (no labels)."""
    def index(records: Sequence[dict[str, Any]]) -> dict[tuple[str, str, int], tuple[dict[str, Any], dict[str, Any]]]:
        out = {}
        for rec in records:
            if rec.get("repeat"):
                continue
            for n, (key, a) in enumerate(graded_assertions(rec)):
                out[(rec["id"], key, n)] = (rec, a)
        return out

    ia, ib = index(a_records), index(b_records)
    groups: dict[str, list[tuple[dict[str, Any], dict[str, Any], dict[str, Any]]]] = defaultdict(list)
    for k in ia.keys() & ib.keys():
        groups[k[1]].append((ia[k][0], ia[k][1], ib[k][1]))
    metrics = []
    for metric, pairs in sorted(groups.items()):
        pairs.sort(key=lambda p: p[0].get("index", 0))
        va = [bool(p[1].get("pass")) for p in pairs]
        vb = [bool(p[2].get("pass")) for p in pairs]
        sa = [float(p[1]["score"]) for p in pairs]
        sb = [float(p[2]["score"]) for p in pairs]
        differ = [p for p in pairs if bool(p[1].get("pass")) != bool(p[2].get("pass"))]
        differ.sort(key=lambda p: -abs(float(p[1]["score"]) - float(p[2]["score"])))
        metrics.append({
            "metric": metric, "grader_a": str(pairs[0][1].get("grader")), "grader_b": str(pairs[0][2].get("grader")),
            "n": len(pairs), "agreement": _r(stats.agreement(va, vb)),
            "agreement_ci": _ci(lambda idx, va=va, vb=vb: stats.agreement([va[i] for i in idx],
                                                                          [vb[i] for i in idx]),
                                len(pairs), seed),
            "kappa": _r(stats.cohen_kappa(va, vb)),
            "kappa_ci": _ci(lambda idx, va=va, vb=vb: stats.cohen_kappa([va[i] for i in idx],
                                                                        [vb[i] for i in idx]),
                            len(pairs), seed),
            "confusion": {"a_pass": {"b_pass": sum(x and y for x, y in zip(va, vb, strict=True)),
                                     "b_fail": sum(x and not y for x, y in zip(va, vb, strict=True))},
                          "a_fail": {"b_pass": sum(y and not x for x, y in zip(va, vb, strict=True)),
                                     "b_fail": sum(not x and not y for x, y in zip(va, vb, strict=True))}},
            "mean_score_a": _r(sum(sa) / len(sa)), "mean_score_b": _r(sum(sb) / len(sb)),
            "disagreements": [{"case": p[0]["id"], "description": p[0].get("description"),
                               "score_a": p[1]["score"], "verdict_a": bool(p[1].get("pass")),
                               "score_b": p[2]["score"], "verdict_b": bool(p[2].get("pass")),
                               "claims_a": claims_text(p[1])[0], "claims_b": claims_text(p[2])[0]}
                              for p in differ],  # all of them: a team labels these (--template A B)
            "n_disagreements": len(differ)})
    return {"metrics": metrics, "only_in_a": len(ia.keys() - ib.keys()), "only_in_b": len(ib.keys() - ia.keys())}
