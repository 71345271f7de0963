"""What a suite may hold and holds: `evalrun validate CONFIG...` (the same loading path as `eval`, nothing called;
`--json`: as one JSON object) and `evalrun list [--json]` (every assertion type, its YAML keys and defaults)."""

from __future__ import annotations

import argparse
import gc
import json
import sys
import textwrap
from collections.abc import Iterable
from typing import Any

from evalrun.assertions import registry
from evalrun.config.suite import count_combinations
from evalrun.errors import ConfigError, Location, UsageError
from evalrun.expand import count_cases, pairs
from evalrun.types import AssertionSpec, Suite, TestSpec, every_assertion


def parse_vars(items: Iterable[str]) -> dict[str, str]:
    """`--var K=V` options (eval, validate, pytest's --evalrun-var) -> dict; a missing `=` is a usage error."""
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--var {item!r} is not KEY=VALUE", key="--var", hint="write e.g. --var topic=cats")
        out[key.strip()] = value
    return out


def _build_grader(resolver: Any, spec: AssertionSpec, test: TestSpec, origin: str, suite: Suite) -> None:
    """Build (not call) the grader: a malformed model id is reported where it was written."""
    try:
        resolver.resolve(spec, test)
    except ConfigError as e:
        if not e.file:
            where = {"assertion provider": (spec.loc, f"{spec.key_path}.provider"),
                     "test options.provider": (test.loc, f"{test.key_path}.options.provider"),
                     "config grader": (Location(suite.files[-1]) if suite.files else None, "grader")}
            loc, key = where.get(origin, (None, origin))
            e.file, e.line, e.key = (loc.file if loc else None), (loc.line if loc else 0), key
        raise


class Tally:
    """What the summary counts, test by test (fed by `load(on_test=...)`, or by `summarize`)."""

    def __init__(self) -> None:
        self.cases = 0  # per repeat
        self.assertions = 0
        self.counts: dict[str, int] = {}
        self.no_case: list[str] = []  # warnings: tests that run no case
        self.relevant: list[tuple[TestSpec, int]] = []  # tests with graded/embedding/classifier assertions

    def add(self, test: TestSpec, n_pairs: int, expand: bool) -> None:
        n_cases = n_pairs * count_combinations(test.vars, expand) if n_pairs else 0
        self.cases += n_cases
        if n_cases == 0:
            where = f"{test.loc}: " if test.loc else ""
            from evalrun.config.checks import test_name

            self.no_case.append(f"{where}{test_name(test)} runs no case "
                                "(its providers/prompts filters exclude every provider x prompt pair)")
        relevant = False  # graded, embedding or classifier assertions
        for spec in every_assertion(test.asserts):  # an assert-set's children counted too
            self.counts[spec.full_type] = self.counts.get(spec.full_type, 0) + 1
            self.assertions += 1
            relevant = relevant or spec.type == "classifier" or bool(
                getattr(spec.handler, "graded", False) or getattr(spec.handler, "needs_embedder", False))
        if relevant:
            self.relevant.append((test, n_cases))


def _check_grading(suite: Suite, tally: Tally, graders: dict[str, str], reps: int,
                   thresholds: dict[str, int]) -> tuple[int, int]:
    """Graders built (not called) and checked; (graded assertions, graded evaluations); `graders` and
    `thresholds` (where each graded threshold comes from -> assertions) filled."""
    from evalrun.grading.select import GraderResolver

    resolver = GraderResolver(suite, None, None)
    graded = graded_evals = 0
    checked = [test for test, _ in tally.relevant]
    for test, n_cases in tally.relevant:
        for spec in every_assertion(test.asserts):
            if getattr(spec.handler, "graded", False):
                graded += 1
                graded_evals += n_cases * reps
                source = (f"{spec.full_type}: {spec.calibration.describe()}" if spec.calibration is not None else
                          "written in the suite, or the metric's default")
                thresholds[source] = thresholds.get(source, 0) + 1
                chosen, origin = resolver.spec_for(spec, test)  # ConfigError for a malformed grader spec
                name = chosen if isinstance(chosen, str) else chosen.get("label") or chosen["id"]
                if name not in graders:
                    _build_grader(resolver, spec, test, origin, suite)
                graders.setdefault(name, origin)
    for described in resolver.check_capabilities(checked):  # e.g. llm-rubric with the builtin grader: an error
        name, _, origin = described.partition(" (")
        graders.setdefault(name, origin.removesuffix(")"))
    from evalrun.grading.classifiers import check_suite  # imports asyncio: only when there is work

    check_suite(checked)  # `classifier` without a classification provider
    return graded, graded_evals


def summarize(suite: Suite, tally: Tally | None = None) -> dict[str, Any]:
    """The validate summary (`tally`: collected while loading, else counted here)."""
    if tally is None:
        tally = Tally()
        for test in suite.tests:
            expand = not (suite.disable_var_expansion or test.options.get("disableVarExpansion"))
            tally.add(test, len(pairs(suite, test)), expand)
    graders: dict[str, str] = {}
    thresholds: dict[str, int] = {}
    graded = graded_evals = 0
    reps = max(1, int(suite.evaluate_options.get("repeat") or 1))
    checked = [test for test, _ in tally.relevant]  # the checks below
    warnings = list(tally.no_case)
    if checked:  # graded, embedding or classifier assertions: the grading modules are imported only then
        graded, graded_evals = _check_grading(suite, tally, graders, reps, thresholds)
        from evalrun.config.calibration import mismatches
        from evalrun.config.checks import context_expansion_warnings

        warnings += context_expansion_warnings(suite, checked) + mismatches(checked, None, suite)
    return {
        "files": list(suite.files), "description": suite.description, "prompts": len(suite.prompts),
        "providers": len(suite.providers), "tests": len(suite.tests),
        "cases": count_cases(suite) if hasattr(suite.tests, "cases_per_repeat") else tally.cases * reps,
        "assertions": tally.assertions, "assertions_by_type": dict(sorted(tally.counts.items())),
        "graded_assertions": graded, "graded_evaluations": graded_evals,
        "graders": [f"{name} ({origin})" for name, origin in graders.items()],
        "graded_thresholds": thresholds,
        "provider_ids": [p.name for p in suite.providers], "prompt_labels": [p.label[:80] for p in suite.prompts],
        "repeat": reps, "warnings": warnings,
    }


def _human(s: dict[str, Any]) -> str:
    def names(items: list[str], limit: int = 6) -> str:
        shown = ", ".join(items[:limit]) + (f", ... ({len(items) - limit} more)" if len(items) > limit else "")
        return shown.replace("\n", " ")

    types = ", ".join(f"{t} {n}" for t, n in s["assertions_by_type"].items()) or "none"
    grader = ", ".join(s["graders"]) or "none needed"
    lines = [
        f"config OK: {', '.join(s['files'])}" + (f" ({s['description']})" if s["description"] else ""),
        f"  prompts     {s['prompts']:>8}  {names(s['prompt_labels'])}",
        f"  providers   {s['providers']:>8}  {names(s['provider_ids'])}",
        f"  tests       {s['tests']:>8}",
        f"  cases       {s['cases']:>8}" + (f"  (repeat {s['repeat']})" if s["repeat"] > 1 else ""),
        f"  assertions  {s['assertions']:>8}  {types}",
        f"  graded      {s['graded_assertions']:>8}  assertions, {s['graded_evaluations']} graded evaluations "
        f"(graders: {grader})",
    ]
    if any(k != "written in the suite, or the metric's default" for k in s["graded_thresholds"]):
        lines += [f"  thresholds  {n:>8}  {source}" for source, n in s["graded_thresholds"].items()]
    lines += [f"  warning: {w}" for w in s["warnings"]]
    return "\n".join(lines)


def check_providers(suite: Suite) -> None:
    """Build every provider (no call, no litellm import): a bad id is reported now."""
    from evalrun import providers

    for spec in suite.providers:
        providers.build(spec, suite.base_dir)
    if isinstance(suite.tests, tuple):  # tests' own providers (a streamed file's rows are built when they run)
        for test in suite.tests:
            if test.provider is not None:
                providers.build(test.provider, suite.base_dir)


def run(args: argparse.Namespace) -> int:
    from evalrun.config import load
    from evalrun.run.progress import LoadProgress, wanted

    paths = [*getattr(args, "configs", []), *getattr(args, "config", [])]
    loading = LoadProgress(wanted(False))
    tally = Tally()  # counted in the loading pass: a streamed test file is read once
    collecting = gc.isenabled()
    gc.disable()  # load() then leaves it off (see below)
    try:
        suite = load(paths, cli_vars=parse_vars(getattr(args, "var", []) or []) or None,
                     strict=True if getattr(args, "strict", False) else None, on_progress=loading,
                     on_test=tally.add)
        # the suite lives until the end: no later collection walks it (~0.1 s each at 10,000 tests)
        gc.freeze()
    finally:
        if collecting:
            gc.enable()
        loading.done()
    check_providers(suite)
    summary = summarize(suite, tally)
    summary["warnings"] = [*suite.warnings, *summary["warnings"]]
    sys.stdout.write((json.dumps(summary, indent=2, default=str) if getattr(args, "json", False)
                      else _human(summary)) + "\n")
    return 0


def list_types(args: argparse.Namespace) -> int:
    rows = [registry.describe(n) for n in registry.names()]
    if args.json:
        json.dump(rows, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    width = max(len(r["type"]) for r in rows) + 2
    out = [f"{len(rows)} assertion types; prefix any with `not-` to negate it. "
           "G = graded (uses a grader model).", ""]
    for r in rows:
        flag = "G" if r["graded"] else " "
        summary = r["summary"]
        if r["alias_of"]:
            summary += f" (alias of {r['alias_of']})"
        if r["plugin"]:
            summary += f" [plugin {r['plugin']}]"
        out.append(f"{flag} {r['type']:<{width}}{summary}")
        details = r["details"] or r["description"]
        if details:
            out.extend(textwrap.indent(textwrap.fill(details, 100), " " * (width + 2)).splitlines())
    sys.stdout.write("\n".join(out) + "\n")
    return 0
