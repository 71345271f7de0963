"""Assertion handlers, and the public API for plugins: `Assertion`, `TextAssertion`, `GradedAssertion`,
`AssertionContext`, `Score`, `binary`, `register`, `is_template` (grader steps live in `evalrun.grading`)."""

from evalrun.assertions.base import Assertion, AssertionContext, Score, TextAssertion, binary, is_template
from evalrun.assertions.graded import GradedAssertion
from evalrun.assertions.registry import DuplicateTypeError, register

__all__ = ["Assertion", "AssertionContext", "DuplicateTypeError", "GradedAssertion", "Score", "TextAssertion",
           "binary", "is_template", "register"]
