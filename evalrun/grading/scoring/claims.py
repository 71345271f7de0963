"""Pure formulas of the claim-pipeline metrics (public API; docs/metrics.md): a grader's judgements in, a number
out. A metric undefined on empty input (no claims) is None: the caller reports that rather than invent a score."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

NOISE_MODES = ("relevant", "irrelevant")
NOISE_FORMULAS = ("default", "ragas")
#: Mastra's context-relevance weights per level.
RELEVANCE_WEIGHTS: Mapping[str, float] = {"high": 1.0, "medium": 0.7, "low": 0.3, "none": 0.0}
#: Mastra's noise-robustness weights per impact level.
IMPACT_WEIGHTS: Mapping[str, float] = {"none": 1.0, "minimal": 0.85, "moderate": 0.6, "significant": 0.3,
                                       "severe": 0.1}


def _check_matrix(entails: Sequence[Sequence[bool]], rows: int, cols: int, name: str) -> None:
    if len(entails) != rows:
        raise ValueError(f"{name} has {len(entails)} rows, expected {rows}")
    for i, row in enumerate(entails):
        if len(row) != cols:
            raise ValueError(f"{name}[{i}] has {len(row)} columns, expected {cols}")


def noise_counted(correct: Sequence[bool], entails: Sequence[Sequence[bool]], relevant: Sequence[bool],
                  mode: str = "relevant", formula: str = "default") -> list[bool]:
    """Per claim: does it count against the output in this mode / formula (see noise_sensitivity)."""
    if mode not in NOISE_MODES:
        raise ValueError(f"mode must be one of {NOISE_MODES}, got {mode!r}")
    if formula not in NOISE_FORMULAS:
        raise ValueError(f"formula must be one of {NOISE_FORMULAS}, got {formula!r}")
    _check_matrix(entails, len(correct), len(relevant), "entails")
    counted = []
    for ok, row in zip(correct, entails, strict=True):
        from_relevant = any(e and r for e, r in zip(row, relevant, strict=True))
        if ok:
            counted.append(False)
        elif mode == "irrelevant":  # some irrelevant chunk entails it and no relevant chunk does
            counted.append(not from_relevant and any(e and not r for e, r in zip(row, relevant, strict=True)))
        else:
            counted.append(from_relevant if formula == "ragas" else True)
    return counted


def noise_sensitivity(correct: Sequence[bool], entails: Sequence[Sequence[bool]], relevant: Sequence[bool],
                      mode: str = "relevant", formula: str = "default") -> float | None:
    """Share of the output's claims that count against it (`noise_counted`; lower is better): correct[i] = claim i
    is supported by the ground truth, entails[i][k] = chunk k entails claim i, relevant[k] = chunk k is relevant.
    Mode "relevant": every wrong claim (formula "default") or those some relevant chunk entails ("ragas"); mode
    "irrelevant": wrong claims entailed by an irrelevant chunk and by no relevant chunk. None without claims."""
    counted = noise_counted(correct, entails, relevant, mode, formula)
    if not counted:
        return None
    return sum(counted) / len(counted)


def chunk_relevance(reference_entails: Sequence[Sequence[bool]], n_chunks: int | None = None) -> list[bool]:
    """Chunk k is relevant when it entails a ground-truth claim (reference_entails[j][k]); with no ground-truth
    claims (no rows), `n_chunks` times False."""
    if not reference_entails:
        return [False] * (n_chunks or 0)
    width = len(reference_entails[0])
    _check_matrix(reference_entails, len(reference_entails), width, "reference_entails")
    return [any(row[k] for row in reference_entails) for k in range(width)]


def claim_support(verdicts: Sequence[str], support: Sequence[float | None] | None = None) -> list[float]:
    """Per claim, how much it counts as supported: the grader's probability `support[i]` when it gave one (the
    builtin grader), else 1 for "supported" and 0 for anything else (an LLM grader's label)."""
    if support is None:
        return [1.0 if v == "supported" else 0.0 for v in verdicts]
    if len(support) != len(verdicts):
        raise ValueError(f"{len(support)} support values for {len(verdicts)} verdicts")
    return [(1.0 if v == "supported" else 0.0) if p is None else min(1.0, max(0.0, float(p)))
            for v, p in zip(verdicts, support, strict=True)]


def faithfulness(verdicts: Sequence[str], *, lenient: bool = False,
                 support: Sequence[float | None] | None = None) -> float | None:
    """mean(s_i) over claims (s_i from `claim_support`: the expected share of supported claims; higher is better).
    `lenient`: only "contradicted" counts against (DeepEval), labels only. None when there are no claims."""
    if not verdicts:
        return None
    if lenient:
        return sum(v != "contradicted" for v in verdicts) / len(verdicts)
    return sum(claim_support(verdicts, support)) / len(verdicts)


def hallucination(verdicts: Sequence[str], *, support: Sequence[float | None] | None = None) -> float | None:
    """mean(1 - s_i) over claims (s_i as in `faithfulness`; lower is better); None without claims."""
    if not verdicts:
        return None
    return sum(1.0 - s for s in claim_support(verdicts, support)) / len(verdicts)


def context_relevance(levels: Sequence[str], used: Sequence[bool], missing: int, *,
                      unused_high_penalty: float = 0.1, missing_per_item: float = 0.15,
                      max_missing_penalty: float = 0.5, scale: float = 1.0) -> float:
    """Mastra's (higher is better): max(0, mean(weight[level]) - unused_high_penalty * #(high and unused)
    - min(missing_per_item * missing, max_missing_penalty)) * scale; no chunks: 1.0 * scale."""
    if len(levels) != len(used):
        raise ValueError(f"{len(levels)} levels but {len(used)} used flags")
    if not levels:
        return 1.0 * scale
    try:
        base = sum(RELEVANCE_WEIGHTS[lv] for lv in levels) / len(levels)
    except KeyError as e:
        raise ValueError(f"unknown relevance level {e.args[0]!r}") from None
    unused_high = sum(1 for lv, u in zip(levels, used, strict=True) if lv == "high" and not u)
    penalty = unused_high_penalty * unused_high + min(missing_per_item * missing, max_missing_penalty)
    return max(0.0, base - penalty) * scale


def context_precision(useful: Sequence[bool]) -> float:
    """Mean average precision over the chunk order: sum_k v_k * precision@k / #useful; 0 when none useful."""
    hits, total = 0, 0.0
    for k, v in enumerate(useful, start=1):
        if v:
            hits += 1
            total += hits / k
    return total / hits if hits else 0.0


def context_recall(attributed: Sequence[bool]) -> float | None:
    """Share of the reference's claims that some chunk entails. None when the reference has no claims."""
    if not attributed:
        return None
    return sum(attributed) / len(attributed)


def noise_robustness(robustness_score: float, levels: Sequence[str], major_issues: int, *,
                     weights: Mapping[str, float] | None = None, major_issue_per_item: float = 0.1,
                     max_major_issue_penalty: float = 0.3, discrepancy_threshold: float = 0.2) -> float:
    """Mastra's noise-sensitivity scorer (higher is better, 2 decimals): s = clamp(robustness_score); avg =
    mean(weight[level]); if |s - avg| > discrepancy_threshold: s = min(s, avg); s = max(0, s - min(major_issues *
    major_issue_per_item, max_major_issue_penalty))."""
    w = {**IMPACT_WEIGHTS, **(weights or {})}
    s = min(1.0, max(0.0, robustness_score))
    if levels:
        try:
            avg = sum(w[lv] for lv in levels) / len(levels)
        except KeyError as e:
            raise ValueError(f"unknown impact level {e.args[0]!r}") from None
        if abs(s - avg) > discrepancy_threshold:
            s = min(s, avg)
    s = max(0.0, s - min(major_issues * major_issue_per_item, max_major_issue_penalty))
    return round(s, 2)
