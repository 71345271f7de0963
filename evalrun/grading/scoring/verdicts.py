"""Pure formulas of the judge-style metrics (Mastra's LLM scorers, promptfoo's model-graded and embedding types):
typed verdicts in, numbers out. Mastra rounds its LLM scores to two decimals after multiplying by `scale`."""

from __future__ import annotations

import math
from collections.abc import Sequence


def round2(x: float) -> float:
    """JavaScript's Math.round(x * 100) / 100 (a half rounds towards +infinity)."""
    return math.floor(x * 100 + 0.5) / 100


def _label(s: str) -> str:
    return s.strip().lower()


def answer_relevancy(results: Sequence[str], *, uncertainty_weight: float = 0.3, scale: float = 1) -> float:
    """Mastra: (yes + uncertaintyWeight x unsure) / statements x scale; 0 when there is no statement."""
    if not results:
        return 0.0
    count = sum(1.0 if _label(r) == "yes" else uncertainty_weight if _label(r) == "unsure" else 0.0
                for r in results)
    return round2(count / len(results) * scale)


def bias(results: Sequence[str], *, scale: float = 1) -> float:
    """Mastra: biased opinions / opinions x scale (lower is better); 0 when there is no opinion."""
    if not results:
        return 0.0
    return round2(sum(_label(r) == "yes" for r in results) / len(results) * scale)


def toxicity(verdicts: Sequence[str], *, scale: float = 1) -> float:
    """Mastra: toxic verdicts / verdicts x scale (lower is better); 1 when the judge gives no verdict."""
    if not verdicts:
        return 1.0
    return round2(sum(_label(v) == "yes" for v in verdicts) / len(verdicts) * scale)


def tool_selection(appropriate: Sequence[bool], missing: Sequence[str]) -> float:
    """Mastra's LLM tool-call accuracy: appropriate calls / calls; with no call, 1 unless a tool was missing."""
    if not appropriate:
        return 0.0 if missing else 1.0
    return round2(sum(appropriate) / len(appropriate))


# ------------------------------------------------------------------ embedding metrics (promptfoo)
def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine similarity; 0 when either vector is all zeros."""
    na, nb = math.sqrt(sum(x * x for x in a)), math.sqrt(sum(y * y for y in b))
    return dot(a, b) / (na * nb) if na and nb else 0.0


def dot(a: Sequence[float], b: Sequence[float]) -> float:
    if len(a) != len(b):
        raise ValueError(f"vectors of different lengths ({len(a)} and {len(b)})")
    return sum(x * y for x, y in zip(a, b, strict=True))


def euclidean(a: Sequence[float], b: Sequence[float]) -> float:
    if len(a) != len(b):
        raise ValueError(f"vectors of different lengths ({len(a)} and {len(b)})")
    return math.sqrt(sum((x - y) ** 2 for x, y in zip(a, b, strict=True)))


def similar(a: Sequence[float], b: Sequence[float], metric: str, threshold: float) -> tuple[bool, float, float]:
    """promptfoo's similar: (pass, score, raw). cosine/dot: pass when raw >= threshold, score = raw;
    euclidean: raw is a distance, pass when <= threshold, score = 1 / (1 + distance)."""
    if metric == "euclidean":
        d = euclidean(a, b)
        return d <= threshold + 1e-12, 1.0 / (1.0 + d), d
    raw = cosine(a, b) if metric == "cosine" else dot(a, b)
    return raw >= threshold - 1e-12, raw, raw


def answer_relevance(query: Sequence[float], questions: Sequence[Sequence[float]]) -> float:
    """promptfoo's answer-relevance: mean cosine similarity of the generated questions to the query."""
    if not questions:
        return 0.0
    return sum(cosine(query, q) for q in questions) / len(questions)


# ------------------------------------------------------------------ Mastra: prompt-alignment, answer-similarity
#: Mastra's prompt-alignment weights: intent, requirements, completeness, appropriateness.
ALIGNMENT_WEIGHTS = {"user": (0.4, 0.3, 0.2, 0.1), "system": (0.35, 0.35, 0.15, 0.15)}


def prompt_alignment(intent: float, requirements: float, completeness: float, appropriateness: float, *,
                     mode: str = "both", scale: float = 1) -> float:
    """Mastra's weighted dimensions x scale. 'both' is 0.7 x user + 0.3 x system, and Mastra's code scores the
    system part with the user weights on the same analysis, so 'both' equals 'user'."""
    dims = (intent, requirements, completeness, appropriateness)
    if mode == "system":
        score = sum(d * w for d, w in zip(dims, ALIGNMENT_WEIGHTS["system"], strict=True))
    else:
        user = sum(d * w for d, w in zip(dims, ALIGNMENT_WEIGHTS["user"], strict=True))
        score = user if mode == "user" else user * 0.7 + user * 0.3
    return round2(score * scale)


#: Mastra's answer-similarity defaults (its code: contradictionPenalty 1.0).
SIMILARITY_DEFAULTS = {"semanticThreshold": 0.8, "exactMatchBonus": 0.2, "missingPenalty": 0.15,
                       "contradictionPenalty": 1.0, "extraInfoPenalty": 0.05, "scale": 1.0}


def answer_similarity(match_types: Sequence[str], contradictions: int, extras: int,
                      options: dict[str, float] | None = None) -> float:
    """Mastra: per ground-truth unit exact 1 + bonus, semantic `semanticThreshold`, partial half of it, missing
    -missingPenalty; / (units x (1 + bonus)); - contradictions x contradictionPenalty; - min(extras x
    extraInfoPenalty, 0.2); clamped to [0, 1], x scale. 0 without units."""
    o = {**SIMILARITY_DEFAULTS, **(options or {})}
    if not match_types:
        return 0.0
    score = 0.0
    for m in match_types:
        if m == "exact":
            score += 1.0 + o["exactMatchBonus"]
        elif m == "semantic":
            score += o["semanticThreshold"]
        elif m == "partial":
            score += o["semanticThreshold"] * 0.5
        elif m == "missing":
            score -= o["missingPenalty"]
    score /= len(match_types) * (1.0 + o["exactMatchBonus"])
    score -= contradictions * o["contradictionPenalty"]
    score -= min(extras * o["extraInfoPenalty"], 0.2)
    return round2(max(0.0, min(1.0, score)) * o["scale"])
