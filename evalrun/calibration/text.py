"""`evalrun calibrate` as text: one block per metric and grader."""

from __future__ import annotations

from typing import Any


def _f(x: float | None, ci: list[float] | None = None) -> str:
    if x is None:
        return "–"
    return f"{x:.2f}" + (f" [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else "")


def _short(text: Any, limit: int = 100) -> str:
    t = " ".join(str(text or "").split())
    return t if len(t) <= limit else t[: limit - 1] + "…"


def labels_text(data: dict[str, Any], shown: int = 5) -> str:
    """The figures of calibrate RESULTS --labels FILE."""
    lines = [f"Labels: {data['labels']['file']} ({data['labels_matched']} matched, {len(data['unmatched'])} "
             f"unmatched, {data['labels']['empty']} not filled in)"]
    for m in data["metrics"]:
        c = m["confusion"]
        lines += ["", f"{m['metric']} graded by {m['grader']}: {m['n']} labels ({m['n_human_pass']} pass, "
                      f"{m['n_human_fail']} fail); {m['direction']}; run threshold "
                      f"{', '.join(f'{t:g}' for t in m['run_thresholds']) or '–'}",
                  f"  confusion      human pass: grader pass {c['human_pass']['grader_pass']}, grader fail "
                  f"{c['human_pass']['grader_fail']} | human fail: grader pass {c['human_fail']['grader_pass']}, "
                  f"grader fail {c['human_fail']['grader_fail']}"]
        if m["note"]:
            lines.append(f"  {m['note']}")
        else:
            lines += [
                "  agreement of the run's verdicts (95% bootstrap interval):",
                f"    balanced accuracy {_f(m['balanced_accuracy'], m['balanced_accuracy_ci'])}   "
                f"Cohen's kappa {_f(m['kappa'], m['kappa_ci'])}",
                f"    FAIL precision {_f(m['precision_fail'], m['precision_fail_ci'])}   "
                f"FAIL recall {_f(m['recall_fail'], m['recall_fail_ci'])}",
                f"  ranking of the scores: AUROC {_f(m['auroc'], m['auroc_ci'])}"]
            if m["suggested_yaml_threshold"] is not None:
                lines.append(f"  suggested threshold {m['suggested_yaml_threshold']:.4g}: out-of-fold balanced "
                             f"accuracy {_f(m['oof_balanced_accuracy'])} ({m['cv']['folds']}-fold, seed "
                             f"{m['cv']['seed']})")
        if m["matched_by_description"]:
            lines.append(f"  {m['matched_by_description']} label(s) matched by description and vars (no case id in the "
                         "label, or the case moved in the suite)")
        if m["disagreements"]:
            lines.append(f"  {len(m['disagreements'])} disagreement(s), worst first"
                         + (f" ({shown} shown, all of them in --json):" if len(m["disagreements"]) > shown else ":"))
            for d in m["disagreements"][:shown]:
                lines.append(f"    {d['case']} {_short(d['description'], 40)!s}: grader "
                             f"{'PASS' if d['verdict'] else 'FAIL'} {d['score']:.2f}, human "
                             f"{'PASS' if d['human'] else 'FAIL'}" + (f" ({_short(d['note'], 60)})" if d['note']
                                                                      else ""))
                if d["claim"]:
                    lines.append(f"      claim: {_short(d['claim'])}")
                if d["evidence"]:
                    lines.append(f"      evidence: {_short(d['evidence'])}")
    if data["unmatched"]:
        lines += ["", f"Unmatched labels ({len(data['unmatched'])}; not counted):"]
        lines += [f"  {u['where']}: {u['assertion']}: {u['why']}" for u in data["unmatched"][:shown * 2]]
        if len(data["unmatched"]) > shown * 2:
            lines.append(f"  ... {len(data['unmatched']) - shown * 2} more (all of them in --json)")
    if data["duplicates"]:
        lines += [f"Duplicate labels (the first counted): {', '.join(d['where'] for d in data['duplicates'])}"]
    return "\n".join(lines)


def graders_text(data: dict[str, Any], shown: int = 5) -> str:
    """The figures of calibrate RESULTS_A RESULTS_B."""
    lines = [f"A: {data['a']}", f"B: {data['b']}"]
    for m in data["metrics"]:
        c = m["confusion"]
        lines += ["", f"{m['metric']}: {m['grader_a']} (A) vs {m['grader_b']} (B), {m['n']} cases",
                  f"  verdicts agree {_f(m['agreement'], m['agreement_ci'])}   Cohen's kappa "
                  f"{_f(m['kappa'], m['kappa_ci'])}   mean score A {_f(m['mean_score_a'])}, "
                  f"B {_f(m['mean_score_b'])}",
                  f"  A pass: B pass {c['a_pass']['b_pass']}, B fail {c['a_pass']['b_fail']} | A fail: B pass "
                  f"{c['a_fail']['b_pass']}, B fail {c['a_fail']['b_fail']}"]
        if m["n_disagreements"]:
            lines.append(f"  {m['n_disagreements']} disagreement(s), largest score gap first (label these):")
            for d in m["disagreements"][:shown]:
                lines.append(f"    {d['case']} {_short(d['description'], 40)}: A {'PASS' if d['verdict_a'] else 'FAIL'}"
                             f" {d['score_a']:.2f}, B {'PASS' if d['verdict_b'] else 'FAIL'} {d['score_b']:.2f}")
            if m["n_disagreements"] > shown:
                lines.append(f"    ... {m['n_disagreements'] - shown} more (all of them in --json)")
            lines.append(f"  to label them: evalrun calibrate --template {data['a']} {data['b']} -o labels.csv")
    if data["only_in_a"] or data["only_in_b"]:
        lines += ["", f"Not paired: {data['only_in_a']} graded assertion(s) only in A, {data['only_in_b']} only in "
                      "B (not the same suite?)"]
    return "\n".join(lines)
