"""Assert on one output in a plain unit test with any registered assertion, through the same runner, grader
selection and cache as `evalrun eval`: `check(answer, [{"type": "faithfulness"}], vars={"context": ...})`."""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from evalrun.errors import ConfigError, EvalrunError

__all__ = ["CheckError", "check", "check_async"]


class CheckError(EvalrunError):
    """An assertion of `check` could not be evaluated (e.g. a grader error): neither a pass nor a failure."""


class _FixedOutput:
    """A provider that returns the output under test."""

    id = label = "check"

    def __init__(self, text: str) -> None:
        self.text = text

    async def call(self, prompt: Any, ctx: Any) -> Any:
        from evalrun.types import Output

        return Output(text=self.text)


def _test_spec(assertions: Any, vars: Mapping[str, Any] | None, base_dir: str) -> Any:
    from evalrun.config.schema import validate
    from evalrun.config.tests import part_from_node, to_spec

    if isinstance(assertions, Mapping):
        assertions = [assertions]
    if not isinstance(assertions, Sequence) or isinstance(assertions, str) or not assertions:
        raise ConfigError("check() needs a list of assertions", key="assertions",
                          hint='e.g. check(output, [{"type": "icontains", "value": "paris"}])')
    node: dict[str, Any] = {"assert": [dict(a) if isinstance(a, Mapping) else a for a in assertions]}
    if vars:
        node["vars"] = dict(vars)
    validate(node, file="check()", definition="test")
    part = part_from_node(node, base_dir, loc=None, key="")
    part.description = "check()"
    return to_spec(part, 0)


async def check_async(output: Any, assertions: Any, *, vars: Mapping[str, Any] | None = None,
                      grader: str | None = None) -> dict[str, Any]:
    """`check` for async code (await it inside a running event loop)."""
    from evalrun.run.options import RunOptions
    from evalrun.run.runner import Runner
    from evalrun.types import Case, PromptSpec, ProviderSpec, Suite

    text = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False, default=str)
    base_dir = os.getcwd()
    test = _test_spec(assertions, vars, base_dir)
    prompt, provider = PromptSpec(raw="", label="check()", id="check()"), ProviderSpec(id="check")
    suite = Suite(description="check()", prompts=(prompt,), providers=(provider,), tests=(test,), files=(),
                  disable_var_expansion=True, base_dir=base_dir)
    case = Case(id="check", index=0, test=test, vars=dict(test.vars), provider=provider, prompt=prompt)
    with tempfile.TemporaryDirectory(prefix="evalrun-check-") as tmp:
        opts = RunOptions(max_concurrency=1, grader=grader, results_file=Path(tmp, "check.jsonl"))
        runner = Runner(suite, opts, build_provider=lambda _spec, _base, _transport: _FixedOutput(text),
                        cases=lambda _suite, _repeat: iter([case]))
        outcome = await runner.run()
        [rec] = list(outcome.iter_results())
    from evalrun.report.console import failure_text

    if rec["status"] == "error":
        raise CheckError("evalrun check could not evaluate an assertion:\n" + failure_text(rec, show_provider=False))
    if rec["status"] != "pass":
        raise AssertionError("evalrun check failed: " + failure_text(rec, show_provider=False))
    return rec


def check(output: Any, assertions: Any, *, vars: Mapping[str, Any] | None = None,
          grader: str | None = None) -> dict[str, Any]:
    """Run `assertions` (assertion mappings as in YAML, or one) on `output`, with the test's `vars` and a grader
    (a model id or "builtin"; default: EVALRUN_GRADER, else builtin). Returns the result record when all pass;
    raises AssertionError on a failure (each failing assertion's reason, graded ones with their claims and
    verdicts), CheckError when an assertion could not be evaluated, ConfigError for a malformed one."""
    return asyncio.run(check_async(output, assertions, vars=vars, grader=grader))
