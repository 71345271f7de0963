"""Fit the builtin grader's support-score weights (evalrun/grading/builtin/support.py) on HaluEval's dev split.

For every item of the dev split (rows 0-4999 only, see data.py), the answer's claims are extracted as the grader
does and each claim's features are computed against the context; an answer's score is the mean support of its
claims, as the faithfulness assertion computes it. A seeded random search over (BIAS, WEIGHTS) maximises, summed
over the three sets, AUROC + 3 x min(0, AUROC - target) (targets: QA 0.94, dialogue 0.65, summarization 0.80), plus QA's
balanced accuracy at the default threshold 0.7, among weights that keep the score's meaning (`meaningful`). It prints the weights to put into support.py.
Never run it on the test or check split: those are for reporting (run.py).

Usage: python -m benchmarks.grading.fit [--rows N] [--iterations N]
"""

from __future__ import annotations

import argparse
import math
import random
import time
from typing import Any

from benchmarks.grading import data, metrics
from evalrun.grading.builtin import extract_claims, support

TARGETS = {"qa": 0.94, "dialogue": 0.65, "summarization": 0.80}
THRESHOLD = 0.7  # faithfulness's default threshold
BA_WEIGHT = 1.0


def claim_features(items: list[dict[str, Any]]) -> list[tuple[bool, list[list[float]]]]:
    """(label, one feature vector per claim) for each item."""
    out = []
    for it in items:
        given = support.question_keys(it["question"])
        vecs = []
        for claim in extract_claims(it["answer"], question=it["question"]):
            a = support.analyse(claim, (it["context"],), given)
            if a is not None:
                vecs.append([a.features[f] for f in support.FEATURES])
        out.append((it["faithful"], vecs))
    return out


def answer_scores(rows: list[tuple[bool, list[list[float]]]], bias: float, weights: list[float]) -> list[float]:
    scores = []
    for _, vecs in rows:
        if not vecs:
            scores.append(1.0)
            continue
        total = 0.0
        for v in vecs:
            z = bias + sum(w * x for w, x in zip(weights, v, strict=True))
            p = 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, z))))
            total += min(p, support.CONTRADICTED_MAX) if v[support.FEATURES.index("conflict")] else p
        scores.append(total / len(vecs))
    return scores


def meaningful(bias: float, weights: list[float]) -> bool:
    """The support score must mean what its verdicts say, whatever the benchmark prefers: a claim whose every
    asserted word is in one evidence sentence scores at least 0.8 (supported); a claim asserting one word, name or
    number that the evidence has nowhere, in place of the evidence's own words, scores below 0.5 (unsupported); one
    word merely added to what the evidence says ("the capital *city* of", support.py `_inserted`) does not make
    it unsupported."""
    f = dict(zip(support.FEATURES, weights, strict=True))
    full = bias + f["phrases"]
    cap = support.COUNT_CAP
    one_name = full + (f["unverified_local_material"] + f["unverified_global_material"]) / cap
    one_word = full + (f["unverified_local"] + f["unverified_global"]) / cap
    one_added = bias + f["phrases"] / 2 + f["inserted"] / cap  # even with half its word pairs found together
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
        value += auc + 3 * min(0.0, auc - TARGETS[name]) + (BA_WEIGHT * ba if name == "qa" else 0.0)
    return value, figures


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1000, help="dev rows per set (2 items each; default 1000)")
    ap.add_argument("--iterations", type=int, default=300)
    ap.add_argument("--drop", default="", help="features to hold at weight 0 (comma-separated), for ablations")
    args = ap.parse_args()
    started = time.perf_counter()
    sets = {s: claim_features(list(data.items(s, "dev", args.rows))) for s in data.SETS}
    print(f"features of {sum(len(r) for r in sets.values())} dev items in {time.perf_counter() - started:.0f} s")
    rng = random.Random(20261123)
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
