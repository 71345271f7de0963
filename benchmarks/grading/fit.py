"""Fit the builtin grader's support-score weights (evalrun/grading/builtin/support.py) on dev splits only.

For every dev item (HaluEval rows 0-4999 `dev` half, see data.py; plus the dev half of any extra labelled set given
with --extra, e.g. the support-bot dev file) the answer's claims are extracted as the grader does and each claim's
features are computed against the context; an answer's score is the mean support of its claims, as the
faithfulness assertion computes it. A seeded random search over (BIAS, WEIGHTS) maximises, summed over the sets,
balanced accuracy of the verdict at the default threshold (what a user sees) + AUROC / 2, with a penalty below each
set's balanced-accuracy aim, among weights that keep the score's meaning (`meaningful`). It prints the weights to
put into support.py. Never run it on the test or check split: those are for reporting (run.py).

Usage: python -m benchmarks.grading.fit [--rows N] [--iterations N] [--extra FILE.jsonl ...]
"""

from __future__ import annotations

import argparse
import json
import math
import random
import time
from pathlib import Path
from typing import Any

from benchmarks.grading import data, metrics
from evalrun.grading.builtin import extract_claims, support

AIMS = {"qa": 0.90, "dialogue": 0.60, "summarization": 0.70}
THRESHOLD = 0.7  # faithfulness's default threshold


def claim_features(items: list[dict[str, Any]]) -> list[tuple[bool, list[list[float]]]]:
    """(label, one feature vector per claim) for each item."""
    out = []
    for it in items:
        given = support.question_keys(it.get("question"))
        vecs = []
        for claim in extract_claims(it["answer"], question=it.get("question")):
            a = support.analyse(claim, (it["context"],), given)
            if a is not None:
                vecs.append([a.features[f] for f in support.FEATURES])
        out.append((bool(it["faithful"]), vecs))
    return out


def answer_scores(rows: list[tuple[bool, list[list[float]]]], bias: float, weights: list[float]) -> list[float]:
    conflict = support.FEATURES.index("conflict")
    scores = []
    for _, vecs in rows:
        if not vecs:
            scores.append(1.0)
            continue
        total = 0.0
        for v in vecs:
            z = bias + sum(w * x for w, x in zip(weights, v, strict=True))
            p = 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, z))))
            total += min(p, support.CONTRADICTED_MAX) if v[conflict] else p
        scores.append(total / len(vecs))
    return scores


def meaningful(bias: float, weights: list[float]) -> bool:
    """The support score must mean what its verdicts say, whatever the benchmark prefers: a claim whose every
    asserted word is in one evidence sentence scores at least 0.8; a claim asserting one name or number the evidence
    has nowhere scores below 0.5 however close its meaning; one word the evidence has nowhere, in a claim not close
    in meaning to any evidence sentence (similarity 0.5), scores below 0.5; one word merely added to what the
    evidence says does not make it unsupported."""
    f = dict(zip(support.FEATURES, weights, strict=True))
    full = bias + f["phrases"]
    cap = support.COUNT_CAP
    one_name = full + (f["unverified_local_material"] + f["unverified_global_material"]) / cap + f["meaning_gap"] * 0.05
    one_word = full + (f["unverified_local"] + f["unverified_global"]) / cap + f["meaning_gap"] * 0.5 \
        + f["reworded"] * 0.5 / cap
    one_added = bias + f["phrases"] / 2 + f["inserted"] / cap + f["meaning_gap"] * 0.2
    return full >= math.log(4) and one_name < 0 and one_word < 0 and one_added >= 0


def objective(sets: dict[str, list[tuple[bool, list[list[float]]]]], bias: float, weights: list[float],
              ) -> tuple[float, dict[str, tuple[float, float]]]:
    value, figures = 0.0, {}
    for name, rows in sets.items():
        labels = [y for y, _ in rows]
        scores = answer_scores(rows, bias, weights)
        auc = metrics.auroc(scores, labels)
        ba = metrics.balanced_accuracy([s >= THRESHOLD for s in scores], labels)
        figures[name] = (auc, ba)
        value += ba + auc / 2 + 3 * min(0.0, ba - AIMS.get(name, 0.8))
    return value, figures


def extra_items(path: Path) -> list[dict[str, Any]]:
    """Labelled items {context, answer, question?, faithful} of a JSONL file (dev files only)."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [r for r in rows if "answer" in r and "faithful" in r]


class Matrices:
    """One set's claims as arrays, for a fast objective: features (claims x FEATURES), item of each claim, labels."""

    def __init__(self, rows: list[tuple[bool, list[list[float]]]]) -> None:
        import numpy as np

        self.x = np.asarray([v for _, vecs in rows for v in vecs], dtype=float).reshape(-1, len(support.FEATURES))
        self.item = np.asarray([i for i, (_, vecs) in enumerate(rows) for _ in vecs], dtype=int)
        self.n = len(rows)
        self.count = np.bincount(self.item, minlength=self.n)
        self.y = np.asarray([lab for lab, _ in rows], dtype=bool)
        self.conflict = self.x[:, support.FEATURES.index("conflict")] > 0

    def scores(self, params: Any) -> Any:
        import numpy as np

        p = 1.0 / (1.0 + np.exp(-np.clip(params[0] + self.x @ params[1:], -50, 50)))
        p = np.where(self.conflict, np.minimum(p, support.CONTRADICTED_MAX), p)
        total = np.bincount(self.item, weights=p, minlength=self.n)
        return np.where(self.count > 0, total / np.maximum(self.count, 1), 1.0)


def smooth_objective(sets: dict[str, Matrices], params: Any, tau: float = 0.05) -> float:
    """A differentiable stand-in for `objective` (sigmoid steps instead of the verdict's hard step), to minimise."""
    import numpy as np

    total = 0.0
    for name, m in sets.items():
        s = m.scores(params)
        hit = 1.0 / (1.0 + np.exp(-(s - THRESHOLD) / tau))
        ba = (hit[m.y].mean() + (1 - hit[~m.y]).mean()) / 2
        diff = s[m.y][:, None] - s[~m.y][None, :]
        auc = float((1.0 / (1.0 + np.exp(-diff / tau))).mean())
        total += ba + auc / 2 + 3 * min(0.0, ba - AIMS.get(name, 0.8))
    return -total


def fit_smooth(sets: dict[str, list[tuple[bool, list[list[float]]]]], restarts: int, seed: int) -> list[float]:
    """L-BFGS on the smooth objective from the current weights and `restarts` random starts; the best by the real
    (hard) objective among the meaningful results."""
    import numpy as np
    from scipy.optimize import minimize

    mats = {k: Matrices(v) for k, v in sets.items()}
    rng = np.random.default_rng(seed)
    start = np.array([support.BIAS, *(support.WEIGHTS[f] for f in support.FEATURES)])
    best, best_value = start, objective(sets, start[0], list(start[1:]))[0] if meaningful(start[0], list(start[1:])) \
        else -math.inf
    for k in range(restarts + 1):
        x0 = start if k == 0 else start + rng.normal(0, 3.0, size=start.shape)
        res = minimize(lambda x: smooth_objective(mats, x) + (0.0 if meaningful(x[0], list(x[1:])) else 5.0),
                       x0, method="L-BFGS-B", options={"maxiter": 300})
        value = objective(sets, res.x[0], list(res.x[1:]))[0] if meaningful(res.x[0], list(res.x[1:])) else -math.inf
        print(f"  start {k}: objective {value:.4f}")
        if value > best_value:
            best, best_value = res.x, value
    return [float(v) for v in best]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=300, help="dev rows per HaluEval set (2 items each; default 300)")
    ap.add_argument("--iterations", type=int, default=3000)
    ap.add_argument("--extra", type=Path, nargs="*", default=[], help="dev JSONL files of labelled items")
    ap.add_argument("--cached", action="store_true", help="reuse the features of the last run with these --rows")
    ap.add_argument("--scipy", action="store_true", help="minimise a smooth objective with scipy (L-BFGS)")
    ap.add_argument("--restarts", type=int, default=8, help="random restarts of --scipy")
    ap.add_argument("--drop", default="", help="features to hold at weight 0 (comma-separated), for ablations")
    args = ap.parse_args()
    started = time.perf_counter()
    sources: dict[str, Any] = {s: (lambda s=s: list(data.items(s, "dev", args.rows))) for s in data.SETS}
    sources.update({p.stem: (lambda p=p: extra_items(p)) for p in args.extra})
    sets = {}
    for name, load in sources.items():
        cache = data.CACHE / f"fit-features-{name}-{args.rows}.json"
        if args.cached and cache.exists():
            sets[name] = [(y, v) for y, v in json.loads(cache.read_text())]
        else:
            sets[name] = claim_features(load())
            cache.write_text(json.dumps(sets[name]))
    print(f"features of {sum(len(r) for r in sets.values())} dev items in {time.perf_counter() - started:.0f} s")
    if args.scipy:
        fitted = fit_smooth(sets, args.restarts, 20261126)
        support_bias, support_weights = fitted[0], fitted[1:]
        value, figures = objective(sets, support_bias, support_weights)
        print(f"objective {value:.4f}")
        for name, (auc, ba) in figures.items():
            print(f"  {name:14} dev AUROC {auc:.3f}  balanced accuracy @{THRESHOLD} {ba:.3f}")
        print(f"BIAS = {support_bias:.3f}")
        print("WEIGHTS = {" + ", ".join(f'"{f}": {w:.3f}' for f, w in zip(support.FEATURES, support_weights, strict=True)) + "}")
        return
    rng = random.Random(20261126)
    dropped = {f for f in args.drop.split(",") if f}
    bias, weights = support.BIAS, [0.0 if f in dropped else support.WEIGHTS[f] for f in support.FEATURES]
    best, figures = objective(sets, bias, weights)
    if not meaningful(bias, weights):
        best = -math.inf
    print(f"current weights: {best:.4f} {figures}")
    for i in range(args.iterations):
        step = 2.0 if i < args.iterations // 3 else 0.7 if i < 2 * args.iterations // 3 else 0.3
        w2 = [0.0 if f in dropped else w + (rng.gauss(0, step) if rng.random() < 0.4 else 0.0)
              for f, w in zip(support.FEATURES, weights, strict=True)]
        b2 = bias + rng.gauss(0, step / 2)
        if not meaningful(b2, w2):
            continue
        value, figs = objective(sets, b2, w2)
        if value > best:
            best, bias, weights, figures = value, b2, w2, figs
    print(f"objective {best:.4f}")
    for name, (auc, ba) in figures.items():
        print(f"  {name:14} dev AUROC {auc:.3f}  balanced accuracy @{THRESHOLD} {ba:.3f}")
    print(f"BIAS = {bias:.3f}")
    print("WEIGHTS = {" + ", ".join(f'"{f}": {w:.3f}' for f, w in zip(support.FEATURES, weights, strict=True)) + "}")


if __name__ == "__main__":
    main()
