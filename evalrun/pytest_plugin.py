"""pytest plugin (entry point `pytest11: evalrun`): an evalrun suite file collected as one pytest item per case
(docs/integrations.md); nothing of evalrun is imported until a suite file is collected."""

from __future__ import annotations

import contextlib
import fnmatch
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from evalrun.types import Case, Suite

SUITE_EXTS = (".yaml", ".yml", ".json")
DEFAULT_PATTERNS = ["evalrun_*.yaml", "evalrun_*.yml"]


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("evalrun", "evalrun suites (options as for `evalrun eval`)")
    group.addoption("--evalrun-grader", metavar="MODEL", default=None,
                    help="grader for graded assertions: a model id or 'builtin' (as `evalrun eval --grader`)")
    group.addoption("--evalrun-max-concurrency", type=int, default=None, metavar="N",
                    help="concurrent cases per suite file (default 4, or evaluateOptions.maxConcurrency)")
    group.addoption("--evalrun-no-cache", action="store_true", default=False,
                    help="do not read or write evalrun's response cache")
    group.addoption("--evalrun-timeout", type=float, default=None, metavar="S", help="per-case timeout")
    group.addoption("--evalrun-repeat", type=int, default=None, metavar="N", help="run each case N times")
    group.addoption("--evalrun-var", action="append", default=[], metavar="K=V", help="set a var for every test")
    group.addoption("--evalrun-strict", action="store_true", default=False,
                    help="what promptfoo lets pass (ignored keys, undefined template variables) is an error, not a "
                         "warning (as `evalrun eval --strict`)")
    parser.addini("evalrun_files", type="args", default=DEFAULT_PATTERNS,
                  help="glob patterns of evalrun suite files pytest collects (default: evalrun_*.yaml "
                       "evalrun_*.yml); files given on the command line are always collected")
    parser.addini("evalrun_grader", default="", help="default grader for evalrun suites (--evalrun-grader wins)")
    parser.addini("evalrun_results_dir", default=".evalrun/pytest",
                  help="folder (relative to the rootdir) for the results file of each suite")


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    """Collect a suite given on the command line, or one whose name matches an `evalrun_files` pattern."""
    if file_path.suffix.lower() not in SUITE_EXTS:
        return None
    patterns = parent.config.getini("evalrun_files")
    if parent.session.isinitpath(file_path) or any(fnmatch.fnmatch(file_path.name, p) for p in patterns):
        return EvalrunFile.from_parent(parent, path=file_path)
    return None


def _clean(text: str, limit: int = 60) -> str:
    text = " ".join(str(text).replace("::", ":").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def case_names(cases: list[Case], suite: Suite) -> list[str]:
    """Readable, unique item names: `description[provider]`, plus the prompt label when the suite has several
    prompts, the vars when a test expands into several combinations, and `#N` for repeats."""
    several_prompts = len({c.prompt.label for c in cases}) > 1
    combos = Counter((c.test.index, c.provider.name, c.prompt.label, c.repeat) for c in cases)
    names: list[str] = []
    seen: Counter[str] = Counter()
    for c in cases:
        base = _clean(c.test.description) if c.test.description else f"tests[{c.test.index}]"
        params = [_clean(c.provider.name, 40)]
        if several_prompts:
            params.append(_clean(c.prompt.label, 40))
        if combos[(c.test.index, c.provider.name, c.prompt.label, c.repeat)] > 1:
            params.append(_clean(", ".join(f"{k}={v}" for k, v in c.vars.items()), 60))
        if c.repeat:
            params.append(f"#{c.repeat}")  # the record's `repeat` (0-based), as in JUnit names
        name = f"{base}[{'-'.join(params)}]"
        seen[name] += 1
        names.append(name if seen[name] == 1 else f"{name} ({seen[name]})")
    return names


def _option(config: pytest.Config, name: str, ini: str | None = None) -> Any:
    value = config.getoption(name)
    if value in (None, "", False) and ini:
        value = config.getini(ini) or None
    return value


class EvalrunFile(pytest.File):
    """One suite file: loads it with evalrun's config loader and yields one item per case."""

    suite: Suite | None = None
    _records: dict[str, dict[str, Any]] | None = None
    _run_error: str | None = None

    def collect(self) -> Iterator[EvalrunItem]:
        from evalrun import config, expand
        from evalrun.commands.validate import parse_vars
        from evalrun.errors import ConfigWarning

        cli_vars = parse_vars(list(self.config.getoption("evalrun_var") or []))
        strict = True if self.config.getoption("evalrun_strict") else None
        self.suite = config.load([str(self.path)], cli_vars=cli_vars or None, strict=strict)
        for text in self.suite.warnings:  # shown in pytest's warnings summary
            self.warn(ConfigWarning(text))
        from evalrun.config.checks import context_expansion_warnings

        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        capture = self.config.pluginmanager.get_plugin("capturemanager")
        for text in context_expansion_warnings(self.suite):  # it multiplies the cases: said before they run too
            if reporter is not None:
                with capture.global_and_fixture_disabled() if capture is not None else contextlib.nullcontext():
                    reporter.write_line(f"evalrun: warning: {text}", yellow=True)
            self.warn(ConfigWarning(text))
        opts = self.run_options()
        cases = list(expand.iter_cases(self.suite, repeat=opts.repeat))
        for case, name in zip(cases, case_names(cases, self.suite), strict=True):
            yield EvalrunItem.from_parent(self, name=name, case=case)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException]) -> Any:  # type: ignore[override]
        from evalrun.errors import ConfigError

        if isinstance(excinfo.value, ConfigError):
            return f"evalrun: {excinfo.value}"
        return super().repr_failure(excinfo)

    def run_options(self) -> Any:
        from evalrun.run.options import RunOptions
        assert self.suite is not None
        cfg = self.config
        max_conc = _option(cfg, "evalrun_max_concurrency")
        results_dir = Path(cfg.rootpath, cfg.getini("evalrun_results_dir"))
        rel = str(self.path.relative_to(cfg.rootpath)) if self.path.is_relative_to(cfg.rootpath) else self.path.name
        slug = re.sub(r"[^A-Za-z0-9._-]+", "_", rel).strip("_") or "suite"
        return RunOptions.merge(self.suite.evaluate_options, max_concurrency=max_conc,
                                repeat=_option(cfg, "evalrun_repeat"), timeout_s=_option(cfg, "evalrun_timeout"),
                                no_cache=bool(cfg.getoption("evalrun_no_cache")),
                                grader=_option(cfg, "evalrun_grader", "evalrun_grader"),
                                results_file=str(results_dir / f"{slug}.jsonl"), progress=False)

    def record_for(self, item: EvalrunItem) -> dict[str, Any]:
        """The item's result record; the first call runs every selected case of this file concurrently."""
        if self._records is None or (item.case.id not in self._records and self._run_error is None):
            selected = [i for i in self.session.items if isinstance(i, EvalrunItem) and i.parent is self]
            if item not in selected:
                selected = [item]
            self._records = {**(self._records or {}), **self._run([i.case for i in selected])}
        if self._run_error is not None:
            pytest.fail(self._run_error, pytrace=False)
        return self._records[item.case.id]

    def _run(self, cases: list[Case]) -> dict[str, dict[str, Any]]:
        import asyncio

        from evalrun.errors import EvalrunError
        from evalrun.run.runner import Runner
        assert self.suite is not None
        try:
            runner = Runner(self.suite, self.run_options(), cases=lambda _suite, _repeat: iter(cases))
            outcome = asyncio.run(runner.run())
        except EvalrunError as e:  # a provider or grader that cannot be built: every item of the file errors
            self._run_error = f"evalrun: {e}"
            return {}
        return {rec["id"]: rec for rec in outcome.iter_results()}


class EvalrunItem(pytest.Item):
    """One case. ERROR -> pytest error (setup), FAIL -> failure with the assertion reasons, PASS -> pass."""

    def __init__(self, *, case: Case, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.case = case
        self.record: dict[str, Any] | None = None
        self.extra_keyword_matches.update({case.provider.name, case.prompt.label})

    def setup(self) -> None:
        from evalrun.report import console

        parent = self.parent
        assert isinstance(parent, EvalrunFile)
        rec = parent.record_for(self)
        self.record = rec
        self.user_properties += [("evalrun_status", rec.get("status")), ("evalrun_score", rec.get("score"))]
        self.add_report_section("setup", "evalrun", console.details_text(rec))
        if rec.get("status") == "error":
            pytest.fail(console.failure_text(rec), pytrace=False)

    def runtest(self) -> None:
        from evalrun.report import console

        rec = self.record
        assert rec is not None
        if rec.get("status") != "pass":
            pytest.fail(console.failure_text(rec), pytrace=False)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        loc = self.case.test.loc
        line = loc.line - 1 if loc and loc.line and Path(loc.file).resolve() == self.path.resolve() else None
        return self.path, line, f"evalrun: {self.name}"
