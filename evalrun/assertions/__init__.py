"""Assertion handlers, and the public API for plugins.

A plugin imports from here (never from the internal modules): `Assertion` (deterministic types),
`TextAssertion` (deterministic types judged on the output text and value alone),
`GradedAssertion` (types graded by a grader model), `AssertionContext`, `Score`, `binary`, `register`
(for a module that registers several types), `is_template`. Grader steps live in `evalrun.grading`.
"""

from evalrun.assertions.base import Assertion, AssertionContext, Score, TextAssertion, binary, is_template
from evalrun.assertions.graded import GradedAssertion
from evalrun.assertions.registry import DuplicateTypeError, register

__all__ = ["Assertion", "AssertionContext", "DuplicateTypeError", "GradedAssertion", "Score", "TextAssertion",
           "binary", "is_template", "register"]
