"""The builtin grader (offline, deterministic) and its building blocks, public for scripts and benchmarks:
`extract_claims` (segmentation), `judge` / `support_score` (the verdict), `attributes` (chunk attribution)."""

from __future__ import annotations

from evalrun.grading.builtin.grader import BuiltinGrader, attributes, faithfulness, judge, support_score
from evalrun.grading.builtin.segment import claims as extract_claims

__all__ = ["BuiltinGrader", "attributes", "extract_claims", "faithfulness", "judge", "support_score"]
