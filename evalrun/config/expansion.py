"""Warnings about var expansion that silently changes what a graded assertion measures.

promptfoo's rule expands a var holding a list into one case per item. For a `context` var read by a graded
assertion (faithfulness over 6 chunks) that makes 6 one-chunk cases instead of one case over 6 chunks.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from evalrun.config.checks import test_name
from evalrun.types import AssertionSpec, Suite, TestSpec

#: The var graded assertions read as their context when no contextTransform is given.
CONTEXT_VAR = "context"


def _walk(specs: Iterable[AssertionSpec]) -> Iterator[AssertionSpec]:
    for s in specs:
        yield s
        yield from _walk(s.children)


def context_expansion_warnings(suite: Suite, tests: Iterable[TestSpec] | None = None) -> list[str]:
    """One warning per test whose `context` list var expands while a graded assertion reads it (`tests`: the
    suite's tests that have a graded assertion, when the caller knows them: no pass over the suite)."""
    out: list[str] = []
    if tests is None and getattr(suite.tests, "graded", True) is False:  # streamed, no graded test: no pass
        return out
    for test in suite.tests if tests is None else tests:
        if suite.disable_var_expansion or test.options.get("disableVarExpansion"):
            continue
        value = test.vars.get(CONTEXT_VAR)
        if not isinstance(value, list) or len(value) < 2 or not all(isinstance(v, str) for v in value):
            continue
        graded = [s for s in _walk(test.asserts)
                  if getattr(s.handler, "graded", False) and not s.context_transform]
        if not graded:
            continue
        where = f"{test.loc}: " if test.loc else ""
        name = test_name(test)
        out.append(f"{where}{name}: vars.{CONTEXT_VAR} is a list of {len(value)} strings, so it expands into "
                   f"{len(value)} cases of one chunk each, and {graded[0].full_type} grades each chunk alone; "
                   "to grade all chunks together set `options.disableVarExpansion: true` on the test "
                   "(or under defaultTest)")
    return out
