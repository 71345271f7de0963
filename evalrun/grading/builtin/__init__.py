"""The builtin grader (offline, deterministic) and its building blocks, public for scripts and benchmarks:
`extract_claims` (segmentation), `judge` / `support_score` (the verdict), `attributes` (chunk attribution)."""

from __future__ import annotations

from evalrun.grading.builtin.grader import (
    ATTRIBUTION_MIN,
    CONTRADICTED_MAX,
    SUPPORT_THRESHOLD,
    BuiltinGrader,
    Judgement,
    attributes,
    faithfulness,
    judge,
    support_score,
)
from evalrun.grading.builtin.segment import claims as extract_claims

__all__ = ["ATTRIBUTION_MIN", "CONTRADICTED_MAX", "SUPPORT_THRESHOLD", "BuiltinGrader", "Judgement", "attributes",
           "extract_claims", "faithfulness", "judge", "support_score"]
