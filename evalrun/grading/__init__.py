"""Graders and grading steps, the public API for plugins (docs/metrics.md, "Adding a metric"): the `Grader`
protocol, `Step` and `judge_step` / `ask` for judge-style steps, the claim-pipeline steps, `block` / `numbered`."""

from evalrun.grading.fence import block, numbered
from evalrun.grading.steps import ATTRIBUTE, CLASSIFY, EXTRACT, VERIFY, Grader, Step, ask, judge_step
from evalrun.types import GraderTrace

__all__ = ["ATTRIBUTE", "CLASSIFY", "EXTRACT", "VERIFY", "Grader", "GraderTrace", "Step", "ask", "block",
           "judge_step", "numbered"]
