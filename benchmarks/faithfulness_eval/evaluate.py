"""AUROC and accuracy of the builtin grader's faithfulness on the labelled set (items.jsonl).

Per item: claims of the answer (the grader's extraction, with the question for short answers), each judged
against the context. Two item scores:
  * faithfulness = mean support score of the claims (the metric itself with the builtin grader; default pass
    threshold 0.7);
  * min support  = the lowest continuous `support_score` of the answer's claims (an answer is as faithful as
    its weakest claim) - a finer ordering for AUROC.
AUROC is the Mann-Whitney probability that a faithful item scores above an unfaithful one (ties count 1/2),
computed here without sklearn. Accuracy: predicted faithful iff faithfulness >= threshold.

Usage: python benchmarks/faithfulness_eval/evaluate.py [--set items|holdout2] [--split dev|test|all] [--errors]
       [--threshold 0.7]

Sets: `items` (items.jsonl, splits dev/test; both have been seen while tuning the scorer) and `holdout2`
(holdout2.jsonl, one split "holdout2"; written before the second round of scorer changes and run once, after
them: the honest unseen figure).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from evalrun.grading.builtin import extract_claims, judge

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run as a script: the repository root
from benchmarks.grading.metrics import auroc  # noqa: E402 - after the path set-up

HERE = Path(__file__).parent
SETS = {"items": HERE / "items.jsonl", "holdout2": HERE / "holdout2.jsonl"}
DEFAULT_THRESHOLD = 0.7  # the faithfulness assertion's default threshold (metrics.md)


def score_item(item: dict[str, object]) -> tuple[float, float, list[tuple[str, str, str]]]:
    """(faithfulness, min support score, [(claim, verdict, reason)]) for one item."""
    question = item.get("question")
    claims = extract_claims(str(item["answer"]), question=str(question) if question else None)
    if not claims:
        return 0.0, 0.0, []
    judged = [judge(c, [str(item["context"])]) for c in claims]
    faith = sum(j.score for j in judged) / len(judged)  # the faithfulness assertion's score (mean support)
    return faith, min(j.score for j in judged), [(c, j.verdict, j.reason) for c, j in zip(claims, judged,
                                                                                           strict=True)]


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--set", choices=tuple(SETS), default="items", dest="set_name",
                    help="which labelled file to evaluate (default: items)")
    ap.add_argument("--split", choices=("dev", "test", "holdout2", "all"), default="all")
    ap.add_argument("--threshold", type=float, default=DEFAULT_THRESHOLD)
    ap.add_argument("--errors", action="store_true", help="print the misclassified items")
    ap.add_argument("--items", default=None, help="path of a labelled .jsonl file (overrides --set)")
    args = ap.parse_args(argv)
    path = Path(args.items) if args.items else SETS[args.set_name]
    items = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    if args.split != "all":
        items = [it for it in items if it["split"] == args.split]
    rows = []
    for it in items:
        faith, low, detail = score_item(it)
        rows.append((it, faith, low, detail))
    splits = tuple(sorted({str(it["split"]) for it in items})) + ("all",)
    print(f"{'subset':<16}{'n':>5}{'faithful':>10}{'AUROC(faith)':>14}{'AUROC(min)':>12}{'accuracy':>10}")
    for kind in ("qa", "summary", "all"):
        for split in (splits if args.split == "all" else (args.split,)):
            sub = [r for r in rows if (kind == "all" or r[0]["kind"] == kind)
                   and (split == "all" or r[0]["split"] == split)]
            if not sub:
                continue
            labels = [bool(r[0]["faithful"]) for r in sub]
            acc = sum((r[1] >= args.threshold) == y for r, y in zip(sub, labels, strict=True)) / len(sub)
            print(f"{kind + '/' + split:<16}{len(sub):>5}{sum(labels):>10}"
                  f"{auroc([r[1] for r in sub], labels):>14.3f}{auroc([r[2] for r in sub], labels):>12.3f}"
                  f"{acc:>10.3f}")
    print(f"\n{'perturbation':<14}{'n':>5}{'label':>10}{'correct at threshold':>22}")
    for kind in sorted({str(r[0]["perturbation"]) for r in rows}):
        sub = [r for r in rows if r[0]["perturbation"] == kind]
        ok = sum((r[1] >= args.threshold) == bool(r[0]["faithful"]) for r in sub)
        label = "faithful" if sub[0][0]["faithful"] else "not"
        print(f"{kind:<14}{len(sub):>5}{label:>10}{ok:>14}/{len(sub)} ({ok / len(sub):.0%})")
    if args.errors:
        for it, faith, low, detail in rows:
            if (faith >= args.threshold) != bool(it["faithful"]):
                print(f"\n{it['id']} [{it['perturbation']}] label={it['faithful']} faith={faith:.2f} min={low:.2f}")
                for c, v, why in detail:
                    print(f"   {v:<12} {c}\n                {why}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
