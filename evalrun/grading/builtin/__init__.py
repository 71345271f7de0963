"""The builtin grader: offline, deterministic, standard library only.

`BuiltinGrader` implements the Grader protocol (evalrun/grading/base.py). The building blocks are public for
scripts and benchmarks: `extract_claims` (segmentation), `judge` / `support_score` (the lexical entailment
scorer), `attributes` (lenient chunk attribution) and `faithfulness`.
"""

from __future__ import annotations

from evalrun.grading.builtin.entail import (
    ATTRIBUTION_MIN,
    CONTRADICTED_MAX,
    SUPPORT_THRESHOLD,
    Judgement,
    attributes,
    judge,
    support_score,
)
from evalrun.grading.builtin.grader import BuiltinGrader, faithfulness
from evalrun.grading.builtin.segment import claims as extract_claims

__all__ = [
    "ATTRIBUTION_MIN",
    "CONTRADICTED_MAX",
    "SUPPORT_THRESHOLD",
    "BuiltinGrader",
    "Judgement",
    "attributes",
    "extract_claims",
    "faithfulness",
    "judge",
    "support_score",
]
