"""Graders and grading steps, and the public API for plugins.

`Grader` is the protocol every grader implements; `Step` describes one grader operation (template, reply
schema, parser, supporting graders); `judge_step` declares a judge-style step and `ask` performs it;
EXTRACT / VERIFY / ATTRIBUTE / CLASSIFY are the claim-pipeline steps. See docs/metrics.md, "Adding a metric".
"""

from evalrun.grading.base import Grader
from evalrun.grading.fence import block, numbered
from evalrun.grading.steps import ATTRIBUTE, CLASSIFY, EXTRACT, VERIFY, Step, ask, judge_step
from evalrun.types import GraderTrace

__all__ = ["ATTRIBUTE", "CLASSIFY", "EXTRACT", "VERIFY", "Grader", "GraderTrace", "Step", "ask", "block",
           "judge_step", "numbered"]
