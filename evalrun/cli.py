"""Command line: `evalrun eval|merge|validate|list|cache|init|schema|report|runs|compare|view|calibrate`, each a
function in
evalrun/commands/ imported only when chosen (`evalrun validate` never imports litellm)."""

from __future__ import annotations

import argparse
import contextlib
import errno
import importlib
import os
import sys
from collections.abc import Sequence
from typing import Any, TextIO, cast

from evalrun import DISTRIBUTION, __version__

EXIT_INTERNAL = 1
EXIT_USAGE = 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        print(f"evalrun: error: {message}\n  hint: run `{self.prog} --help` for the options", file=sys.stderr)
        raise SystemExit(EXIT_USAGE)


def _configs(p: argparse.ArgumentParser) -> None:
    p.add_argument("configs", nargs="*", metavar="CONFIG", help="config file(s) (YAML or JSON)")
    p.add_argument("-c", "--config", action="append", default=[], metavar="CONFIG",
                   help="config file; may be given several times (merged)")
    p.add_argument("--var", action="append", default=[], metavar="K=V", help="set a var for every test")
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    p.add_argument("--strict", action="store_true",
                   help="keys promptfoo ignores (warnings by default) are errors")
    p.add_argument("--confine", action="store_true",
                   help="refuse file:// paths outside the config's folder tree (also EVALRUN_CONFINE=1; "
                        "docs/security.md)")


def _results(p: Any) -> None:
    """What `eval` and `merge` share: the reports, the table, the exit code's threshold."""
    p.add_argument("-o", "--output", action="append", default=[], metavar="FILE",
                   help="write results; format from extension: .json .jsonl .csv .xml (JUnit) .html .txt .yaml")
    p.add_argument("--no-table", action="store_true", help="do not print the results table")
    p.add_argument("--pass-rate-threshold", type=float, default=None, metavar="PCT",
                   help="exit 0 when at least PCT%% of cases pass")


def _history(p: argparse.ArgumentParser) -> None:
    p.add_argument("-c", "--config", default=None, metavar="CONFIG",
                   help="read the history next to this config (default: .evalrun in the current folder)")
    p.add_argument("--dir", default=None, metavar="DIR", help="a .evalrun folder, or the folder holding one")


def _eval_options(ev: argparse.ArgumentParser) -> None:
    """`evalrun eval`'s options, grouped as in its --help: select, output, run, grading (promptfoo's names and
    meanings; where evalrun differs: docs/config.md, "Where evalrun differs")."""
    _configs(ev)
    su = ev.add_argument_group("suite from the command line (over the config's)")
    su.add_argument("-p", "--prompts", nargs="+", metavar="PATH", default=None,
                    help="prompt files (or file:// references), relative to the current folder, instead of the "
                         "config's prompts")
    su.add_argument("-r", "--providers", nargs="+", metavar="ID", default=None,
                    help="providers to run: a config provider's id, label or id suffix picks it, any other id is "
                         "used as given")
    su.add_argument("-t", "--tests", "--vars", metavar="PATH", default=None, dest="tests",
                    help="test cases file (CSV, YAML, JSON, JSONL), relative to the current folder, instead of the "
                         "config's tests")
    su.add_argument("-a", "--assertions", metavar="PATH", default=None,
                    help="standalone assertions (YAML/JSON list) run over --model-outputs through `echo`")
    su.add_argument("--model-outputs", metavar="JSON", default=None,
                    help="JSON list of outputs (strings or {output, tags}) that -a/--assertions judges")
    su.add_argument("--prompt-prefix", metavar="TEXT", default=None, help="prepended to every prompt")
    su.add_argument("--prompt-suffix", metavar="TEXT", default=None, help="appended to every prompt")
    su.add_argument("--description", metavar="TEXT", default=None, help="the run's description (over the config's)")
    su.add_argument("--tag", action="append", default=[], metavar="K=V",
                    help="a tag of the run (repeatable; over the config's `tags`)")
    su.add_argument("--env-file", "--env-path", action="append", default=[], metavar="PATH",
                    help="load environment variables from .env file(s), over the process environment (repeatable "
                         "or comma-separated; a later file wins)")
    se = ev.add_argument_group("select")
    se.add_argument("--filter-pattern", metavar="REGEX", help="only tests whose description matches")
    se.add_argument("--filter-first-n", type=int, metavar="N", help="only the first N cases")
    se.add_argument("--filter-range", metavar="START:END",
                    help="only tests whose zero-based index is in [START, END) (e.g. 0:10, 10:, :10)")
    se.add_argument("--filter-sample", type=int, metavar="N", help="only a random sample of N tests")
    se.add_argument("--filter-sample-seed", type=int, metavar="SEED",
                    help="seed making --filter-sample repeatable (the same tests as promptfoo's with that seed)")
    se.add_argument("--filter-metadata", action="append", default=[], metavar="K=V",
                    help="only tests whose metadata K contains V (repeatable: all must match)")
    se.add_argument("--filter-prompts", metavar="REGEX", help="only prompts whose id or label matches")
    se.add_argument("--filter-providers", "--filter-targets", metavar="REGEX", dest="filter_providers",
                    help="only providers whose id or label matches")
    se.add_argument("--filter-failing", metavar="RESULTS",
                    help="only cases that failed or errored in RESULTS (a results file or -o .json report)")
    se.add_argument("--filter-failing-only", metavar="RESULTS",
                    help="only cases whose assertions failed in RESULTS (not its errors)")
    se.add_argument("--filter-errors-only", metavar="RESULTS", help="only cases that were an ERROR in RESULTS")
    se.add_argument("--shard", metavar="K/N", default=None,
                    help="run shard K of N (a deterministic 1/N of the cases, for CI matrices); "
                         "combine the shards with `evalrun merge`")
    ou = ev.add_argument_group("output")
    _results(ou)
    ou.add_argument("--table-cell-max-length", type=int, default=None, metavar="N",
                    help="cut each table cell line at N characters (as promptfoo) and wrap it whole, instead of "
                         "fitting cells to the terminal")
    ou.add_argument("--verbose", action="store_true",
                    help="after the table, print each case that did not pass in full: every failing assertion with "
                         "its graded claims, verdicts and evidence (as `pytest evalrun.yaml` does)")
    ou.add_argument("--no-progress-bar", action="store_true", help="no progress bar")
    ou.add_argument("--results-file", metavar="JSONL", default=None,
                    help="where results are appended as cases finish (default: a file of this run's own, "
                         ".evalrun/runs/RUN_ID.jsonl next to the config; .evalrun/last-run.jsonl points at it)")
    ou.add_argument("--no-history", action="store_true",
                    help="do not record this run in .evalrun/history.sqlite")
    ou.add_argument("--no-write", action="store_true",
                    help="write nothing under .evalrun: no history, no last-run pointer, the results file in a "
                         "temporary folder (unless --results-file)")
    ou.add_argument("--format", choices=["console", "github"], default=None, dest="format",
                    help="github: also print ::error annotations at each failing test's line and write the job "
                         "summary (default when GITHUB_ACTIONS=true; --format console turns it off)")
    ru = ev.add_argument_group("run")
    ru.add_argument("-j", "--max-concurrency", type=int, default=None, metavar="N",
                    help="concurrent cases (default 4, or evaluateOptions.maxConcurrency)")
    ru.add_argument("--repeat", type=int, default=None, metavar="N", help="run each case N times")
    ru.add_argument("--delay", type=int, default=None, metavar="MS", help="wait MS between calls")
    ru.add_argument("--timeout", type=float, default=None, metavar="S", help="per-case timeout in seconds")
    ru.add_argument("--no-cache", action="store_true", help="do not read or write the response cache")
    ru.add_argument("--resume", nargs="?", const="", default=None, metavar="RESULTS_JSONL",
                    help="continue an interrupted run, skipping cases already in its results file")
    ru.add_argument("--retry-errors", action="store_true",
                    help="run again the ERROR cases of the last run, in its results file (the others are kept)")
    ru.add_argument("-w", "--watch", action="store_true",
                    help="run again whenever the config or a file it reads changes (Ctrl-C stops)")
    ru.add_argument("--watch-iterations", type=int, default=None, help=argparse.SUPPRESS)  # tests: stop after N runs
    ru.add_argument("--workers", metavar="N", default=None,
                    help="run the cases in N processes on this machine (or 'auto': one per CPU), merged into one "
                         "run; for big CPU-bound suites (default 1)")
    ru.add_argument("--executor", choices=["local", "ray"], default=None,
                    help="ray: run the cases as Ray tasks, one shard each, on a Ray cluster or a local instance "
                         "(needs `pip install 'evalrun-llm[ray]'`); results, reports and exit code as without")
    ru.add_argument("--ray-address", metavar="ADDR", default=None,
                    help="the Ray cluster to use (default: RAY_ADDRESS, else a local instance)")
    ru.add_argument("--ray-tasks", type=int, default=None, metavar="N",
                    help="shards (Ray tasks) to split the cases into (default: the cluster's CPUs)")
    ru.add_argument("--dry-run", action="store_true",
                    help="load and expand, call nothing; print the calls the run would make")
    gr = ev.add_argument_group("grading")
    gr.add_argument("--grader", metavar="MODEL", default=None,
                    help="grader for graded assertions: a model id (e.g. openai:gpt-4o-mini) or 'builtin'")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="evalrun", description="Evaluate LLM output against YAML-declared assertions.")
    parser.add_argument("--version", action="version", version=f"evalrun {__version__} ({DISTRIBUTION})")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    ev = sub.add_parser("eval", help="run a suite and report results")
    _eval_options(ev)

    me = sub.add_parser("merge", help="combine the results files of shards (--shard K/N) into one report")
    me.add_argument("results", nargs="+", metavar="RESULTS_JSONL", help="results files of the shards")
    me.add_argument("--results-file", metavar="JSONL", default=None,
                    help="the merged results file (default .evalrun/merged.jsonl)")
    _results(me)

    va = sub.add_parser("validate", help="load and check config(s) without calling anything")
    _configs(va)
    va.add_argument("--json", action="store_true", help="print the summary as JSON")

    li = sub.add_parser("list", help="list assertion types")
    li.add_argument("--json", action="store_true", help="print as JSON")

    it = sub.add_parser("init", help="scaffold a suite that passes offline, with a GitHub Actions workflow")
    it.add_argument("dir", nargs="?", default=".", metavar="DIR", help="folder to create it in (default: here)")
    it.add_argument("--template", choices=["rag", "basic"], default="rag",
                    help="rag: a small RAG app with graded metrics (default); basic: deterministic checks")

    sc = sub.add_parser("schema", help="print or write the config's JSON Schema (for the YAML language server)")
    sc.add_argument("-o", "--output", default=None, metavar="PATH",
                    help="write it to PATH (a folder: PATH/evalrun.schema.json) instead of printing it")
    sc.add_argument("--results", action="store_true", help="the results' schema instead of the config's")

    rp = sub.add_parser("report", help="write reports (any format) from a results file")
    rp.add_argument("results", metavar="RESULTS_JSONL", help="results file of a run (.evalrun/last-run.jsonl)")
    rp.add_argument("-o", "--output", action="append", default=[], metavar="FILE",
                    help="report to write; format from extension: .json .jsonl .csv .xml (JUnit) .html .txt .yaml")

    ru = sub.add_parser("runs", help="list recorded runs (.evalrun/history.sqlite)")
    _history(ru)
    ru.add_argument("-n", "--limit", type=int, default=20, metavar="N", help="newest N runs (default 20, 0: all)")
    ru.add_argument("--json", action="store_true", help="print as JSON")

    co = sub.add_parser("compare", help="what changed between two runs (default: latest~1 latest)")
    co.add_argument("a", nargs="?", default="latest~1", metavar="A",
                    help="baseline: a run id, latest, latest~N, or a results .jsonl / .json file")
    co.add_argument("b", nargs="?", default="latest", metavar="B", help="the run compared with A (default latest)")
    _history(co)
    co.add_argument("--format", choices=["text", "json", "markdown"], default="text", help="stdout format")
    co.add_argument("-o", "--output", action="append", default=[], metavar="FILE",
                    help="also write the diff; format from the extension: .json .md .html")
    co.add_argument("--fail-on", choices=["regression"], default=None,
                    help="exit 100 when anything regressed beyond --tolerance (a CI gate)")
    co.add_argument("--tolerance", type=float, default=0.0, metavar="X",
                    help="score or pass-rate drop (0-1) still accepted as unchanged (default 0)")

    vw = sub.add_parser("view", help="browse the runs and their results in a local web page (read-only)")
    vw.add_argument("dir", nargs="?", default=".", metavar="DIR",
                    help="the folder of the config, its .evalrun folder, or the config file (default: here)")
    vw.add_argument("--port", type=int, default=None, metavar="N",
                    help="port (default 15500, or a free one when that is taken; 0: any free port)")
    vw.add_argument("--host", default="127.0.0.1", metavar="ADDR",
                    help="address to listen on (default 127.0.0.1: this machine only)")
    vw.add_argument("--allow-host", action="append", default=[], metavar="NAME",
                    help="also answer requests whose Host is NAME (a DNS name that points here; repeatable). "
                         "Other names are refused on every address, 0.0.0.0 too (DNS rebinding)")

    cb = sub.add_parser("calibrate", help="how often a grader agrees with your labels (or another grader), "
                                         "and the threshold that fits them (docs/calibrate.md)")
    cb.add_argument("results", nargs="+", metavar="RESULTS",
                    help="results file of a run; two files: compare the graders of two runs of one suite")
    cb.add_argument("--template", action="store_true",
                    help="write a labels file to fill in (-o FILE.csv or .jsonl) from RESULTS' graded assertions "
                         "(two RESULTS: only where their graders disagree)")
    cb.add_argument("--labels", metavar="FILE", help="your labels (CSV or JSONL: case, assertion, human, note)")
    cb.add_argument("-o", "--output", action="append", default=[], metavar="FILE",
                    help="with --template: the labels file; else .json: a calibration file for "
                         "`threshold: calibrated`, .html: a page of the figures")
    cb.add_argument("--sample", type=int, default=None, metavar="N",
                    help="with --template: N rows, stratified by the grader's score (default: all)")
    cb.add_argument("--seed", type=int, default=0, metavar="S", help="seed of sampling, folds and bootstrap")
    cb.add_argument("--min-labels", type=int, default=20, metavar="N",
                    help="labels of each class (pass, fail) needed before a figure is printed (default 20)")
    cb.add_argument("--json", action="store_true", help="print as JSON")

    ca = sub.add_parser("cache", help="inspect or clear the response cache")
    ca.add_argument("action", choices=["stats", "clear"])
    for name, p in sub.choices.items():
        if name not in ("eval", "validate"):  # theirs is in the help (_configs)
            p.add_argument("--debug", action="store_true", help=argparse.SUPPRESS)
    return parser


#: command -> its module in evalrun/commands/ and the function there
_COMMANDS = {"eval": ("evaluate", "run"), "merge": ("evaluate", "merge"), "report": ("evaluate", "rebuild_reports"),
             "validate": ("validate", "run"), "list": ("validate", "list_types"), "cache": ("runs", "cache"),
             "init": ("init_suite", "run"), "runs": ("runs", "list_runs"), "compare": ("runs", "compare"),
             "view": ("runs", "view"), "calibrate": ("calibrate", "run"), "schema": ("schema_file", "run")}


def main(argv: Sequence[str] | None = None) -> int:
    from evalrun.signals import exit_on_interrupt

    with exit_on_interrupt():  # Ctrl-C exits at once (130) until the run or another long phase takes over
        return _command(argv)


def _command(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not args.command:
        parser.print_help()
        return EXIT_USAGE
    debug = bool(getattr(args, "debug", False)) or bool(os.environ.get("EVALRUN_DEBUG"))
    confine_was = os.environ.get("EVALRUN_CONFINE")
    if getattr(args, "confine", False):  # through the environment: --workers' processes load the config too
        os.environ["EVALRUN_CONFINE"] = "1"
    # imported after parsing: `--help` and usage errors need neither (errors.py imports dataclasses)
    from evalrun.errors import ConfigError, EvalrunError, UsageError
    guard_stdout()
    try:
        module, function = _COMMANDS[args.command]
        try:
            return int(getattr(importlib.import_module(f"evalrun.commands.{module}"), function)(args))
        except OSError as e:
            if e.errno != errno.ENAMETOOLONG:
                raise
            # a path the system refuses, from any argument (DIR, --dir, --env-file, ...): a user error
            name = str(e.filename)
            shown = name if len(name) <= 80 else f"{name[:60]}…{name[-16:]}"
            raise UsageError(f"cannot use the path {shown!r}: {e.strerror}",
                             hint="shorten the file name (at most 255 bytes a name on most systems)") from e
    except EvalrunError as e:
        if debug:  # the traceback; the exit code stays the same
            import traceback  # only with --debug: not on every start-up

            traceback.print_exc()
        from evalrun.credentials import Scrubber

        user = isinstance(e, ConfigError)
        print(f"evalrun: {'' if user else 'error: '}{Scrubber.for_run().text(str(e))}", file=sys.stderr)
        return EXIT_USAGE if user else EXIT_INTERNAL
    except KeyboardInterrupt:  # a second Ctrl-C during the run
        print("evalrun: interrupted", file=sys.stderr)
        return 130
    finally:  # for this command only (main() may be called again in one process: the API, the tests)
        if confine_was is None:
            os.environ.pop("EVALRUN_CONFINE", None)
        else:
            os.environ["EVALRUN_CONFINE"] = confine_was


class _GuardedStdout:
    """stdout that, once its reader has gone (`evalrun eval ... | head -1`), is switched to os.devnull: the run goes
    on quietly (reports, results, its own exit code)."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._broken = False

    def _divert(self) -> None:
        self._broken = True
        with contextlib.suppress(OSError, ValueError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self._stream.fileno())  # the interpreter's final flush must not fail either
            os.close(devnull)

    def write(self, text: str) -> int:
        if not self._broken:
            try:
                return self._stream.write(text)
            except BrokenPipeError:
                self._divert()
        return len(text)

    def flush(self) -> None:
        if not self._broken:
            try:
                self._stream.flush()
            except BrokenPipeError:
                self._divert()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def guard_stdout() -> None:
    """Install the guard on the process's real stdout (once; a replaced stdout, e.g. under pytest, is kept)."""
    if sys.stdout is not None and sys.stdout is sys.__stdout__:
        reconfigure = getattr(sys.stdout, "reconfigure", None)
        if reconfigure is not None:  # text it cannot encode (a lone surrogate, a C locale) printed escaped
            reconfigure(errors="backslashreplace")
        sys.stdout = cast(TextIO, _GuardedStdout(cast(TextIO, sys.stdout)))


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
