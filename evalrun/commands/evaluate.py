"""`evalrun eval`, `evalrun merge` (the shards of `eval --shard K/N` as one run) and `evalrun report` (reports
rebuilt from a results file); exit codes: docs/running.md, "Exit codes"."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import os
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from evalrun import config, report, templating
from evalrun.commands.validate import parse_vars
from evalrun.config.checks import context_expansion_warnings
from evalrun.config.cli_suite import CommandLineSuite, key_values
from evalrun.errors import UsageError
from evalrun.report import console
from evalrun.run import recording, split, store
from evalrun.run.options import RunOptions
from evalrun.run.progress import LoadProgress, Progress, wanted
from evalrun.run.runner import Runner
from evalrun.run.selection import Narrowing
from evalrun.run.tally import RunOutcome, Tally
from evalrun.signals import EXIT_INTERRUPTED, EXIT_SIGTERM, sigterm_as_sigint, stoppable
from evalrun.types import Suite, every_assertion

EXIT_FAILED = 100
ASSUMED_COMPLETION_TOKENS = 256  # --dry-run's cost estimate, for a provider without max_tokens
EXIT_USAGE = 2
_RESUME_HINT = "run without --resume first, or name the file: --resume path/to/results.jsonl"


def _env_number(name: str, kind: type) -> Any:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return None
    try:
        return kind(raw)
    except ValueError:
        raise UsageError(f"{name}={raw!r} is not a number", key=name) from None


def check_env(pass_rate_threshold: float | None) -> None:
    """--pass-rate-threshold and the exit-code environment variables checked before any call."""
    if pass_rate_threshold is not None and not 0 <= pass_rate_threshold <= 100:
        raise UsageError("--pass-rate-threshold is a percentage between 0 and 100")
    _env_number("EVALRUN_FAILED_TEST_EXIT_CODE", int)
    if pass_rate_threshold is None:
        _env_number("EVALRUN_PASS_RATE_THRESHOLD", float)


def no_match_message(filter_pattern: str | None, filter_failing: str | None,
                     others: dict[str, str] | None = None) -> str:
    named = [f"{flag} {value!r}" for flag, value in (("--filter-pattern", filter_pattern),
                                                     ("--filter-failing", filter_failing), *(others or {}).items())
             if value]
    return f"evalrun: warning: no case matched {' and '.join(named)}; nothing was run (exit code {EXIT_USAGE})"


def exit_code(summary: dict[str, Any], pass_rate_threshold: float | None) -> int:
    """0 when every case passed (or the pass rate reaches the threshold), else the failed-test code."""
    failed_code = _env_number("EVALRUN_FAILED_TEST_EXIT_CODE", int)
    failed_code = EXIT_FAILED if failed_code is None else failed_code
    if pass_rate_threshold is None:
        pass_rate_threshold = _env_number("EVALRUN_PASS_RATE_THRESHOLD", float)
    if summary["total"] == 0:
        return 0
    if pass_rate_threshold is not None:
        return 0 if (summary["pass_rate"] or 0.0) >= pass_rate_threshold else failed_code
    return 0 if summary["failed"] == summary["errors"] == 0 else failed_code


def _executors(args: argparse.Namespace) -> tuple[Any, int]:
    """(RayExecutor's settings for `--executor ray` or None, `--workers` N or 1), checked before the config loads."""
    ray = None
    if args.executor == "ray" or args.ray_address is not None or args.ray_tasks is not None:
        from evalrun.run.workers import check_args

        ray = check_args(args.executor, args.ray_address, args.ray_tasks, shard=args.shard)
    if args.workers is None:
        return ray, 1
    if ray is not None:
        raise UsageError("--workers and --executor ray do not combine: Ray spreads the cases itself",
                         key="--workers", hint="set the number of Ray tasks with --ray-tasks N")
    from evalrun.run.workers import parse

    return ray, parse(args.workers)


def load_env_files(values: list[str]) -> None:
    """--env-file (repeatable, or comma-separated): each file's variables over the process environment, a later
    file over an earlier one (promptfoo's dotenv override); a missing file is a usage error."""
    paths = [p.strip() for v in values for p in v.split(",") if p.strip()]
    for p in paths:
        if not Path(p).is_file():
            raise UsageError(f"--env-file {p!r}: no such file", key="--env-file",
                             hint="give the path of a .env file (KEY=value lines)")
    if paths:
        from dotenv import load_dotenv

        for p in paths:
            load_dotenv(p, override=True)


def _failing(args: argparse.Namespace) -> tuple[str | None, str]:
    """(results file, split.FAILING_KINDS kind) of --filter-failing, --filter-failing-only, --filter-errors-only."""
    only, errors = args.filter_failing_only, args.filter_errors_only
    if args.filter_failing and (only or errors):
        raise UsageError("--filter-failing selects failures and errors: give it alone", key="--filter-failing",
                         hint="or --filter-failing-only FILE and/or --filter-errors-only FILE")
    if only and errors:
        if only != errors:
            raise UsageError("--filter-failing-only and --filter-errors-only name different results files",
                             key="--filter-failing-only", hint="give both the same file (or --filter-failing FILE)")
        return only, "failing"
    if only:
        return only, "failures"
    if errors:
        return errors, "errors"
    return args.filter_failing, "failing"


def command_line_suite(args: argparse.Namespace) -> CommandLineSuite:
    """-p -r -t -a --model-outputs --prompt-prefix --prompt-suffix --description --tag."""
    return CommandLineSuite(prompts=tuple(args.prompts) if args.prompts else None,
                            providers=tuple(args.providers) if args.providers else None, tests=args.tests,
                            assertions=args.assertions, model_outputs=args.model_outputs, prefix=args.prompt_prefix,
                            suffix=args.prompt_suffix, description=args.description,
                            tags=key_values(args.tag, "--tag"))


def run(args: argparse.Namespace) -> int:
    if args.table_cell_max_length is not None and args.table_cell_max_length < 1:
        raise UsageError("--table-cell-max-length needs a whole number >= 1", key="--table-cell-max-length")
    load_env_files(args.env_file)
    if args.watch:
        if args.resume is not None or args.retry_errors:
            raise UsageError("--watch runs afresh each time: it does not combine with --resume or --retry-errors",
                             key="--watch")
        from evalrun.commands import watch

        return watch.loop(lambda: _run_once(args), iterations=args.watch_iterations)
    return _run_once(args)[0]


def _run_once(args: argparse.Namespace) -> tuple[int, set[Path]]:
    """One run: its exit code and the files it read (what --watch watches)."""
    from evalrun.commands.watch import watched_files

    code, suite, paths = _evaluate(args)
    return code, watched_files(suite, paths)


def _evaluate(args: argparse.Namespace) -> tuple[int, Suite, list[str]]:
    cli_vars = parse_vars(args.var)
    check_env(args.pass_rate_threshold)
    ray, workers = _executors(args)
    cli = command_line_suite(args)
    narrowing = Narrowing.from_options(
        metadata=args.filter_metadata, pattern=args.filter_pattern, range=args.filter_range,
        sample=args.filter_sample, seed=None if args.filter_sample_seed is None else str(args.filter_sample_seed), prompts=args.filter_prompts,
        providers=args.filter_providers)
    failing, failing_kind = _failing(args)
    if ray is not None and (narrowing or not cli.empty()):  # each Ray task loads the config files again
        raise UsageError("--executor ray runs the config files as written: it does not combine with -p, -r, -t, -a, "
                         "--prompt-prefix/suffix, --description, --tag or --filter-range/-sample/-metadata/-prompts/"
                         "-providers", key="--executor", hint="use --workers N on one machine, or put them in the config")
    if args.retry_errors and (args.resume is not None or args.no_write or args.tag):
        raise UsageError("--retry-errors continues the last run: it does not combine with --resume, --no-write "
                         "or --tag", key="--retry-errors")
    progress_on = wanted(args.no_progress_bar) and not args.dry_run
    loading = LoadProgress(progress_on)
    paths = [*(args.configs or []), *(args.config or [])] or ([] if cli.standalone() else config.default_paths())
    strict = True if getattr(args, "strict", False) else None
    try:
        suite = config.load(paths, cli_vars=cli_vars or None, strict=strict, on_progress=loading, cli=cli)
    finally:
        loading.done()
    suite = narrowing.apply(suite)
    gc.freeze()  # the loaded suite lives through the run: the run's collections need not walk it again
    for warning in [*suite.warnings, *context_expansion_warnings(suite)]:
        sys.stderr.write(f"warning: {warning}\n")
    results_file = args.resume or args.results_file  # --resume FILE names the results file to continue
    if (args.resume == "" or args.retry_errors) and not results_file:  # the run last-run.jsonl points at
        state = recording.state_dir(suite.files)
        results_file = recording.last_run(state)
        if results_file is None:
            flag = "--retry-errors" if args.retry_errors else "--resume"
            raise UsageError(f"{flag}: no previous run in {str(state)!r} to continue", key=flag, hint=_RESUME_HINT)
    opts = RunOptions.merge(
        suite.evaluate_options, max_concurrency=args.max_concurrency, repeat=args.repeat, delay_ms=args.delay,
        timeout_s=args.timeout, no_cache=args.no_cache, grader=args.grader, filter_pattern=args.filter_pattern,
        filter_first_n=args.filter_first_n, filter_failing=failing, failing_kind=failing_kind,
        results_file=results_file, resume=args.resume is not None or args.retry_errors,
        retry_errors=args.retry_errors, progress=progress_on, write=not args.no_write,
        history=not (args.no_history or args.no_write), shard=None if args.shard is None else split.parse(args.shard))
    outputs = list(args.output or suite.output_paths)
    for path in outputs:
        report.check_path(path)
    if opts.resume and opts.results_file is not None and not opts.results_file.exists():
        raise UsageError(f"--resume: no results file {str(opts.results_file)!r} to continue", hint=_RESUME_HINT)
    from evalrun.config.calibration import mismatches

    for warning in mismatches(suite.tests, opts.grader, suite):  # a threshold calibrated with another grader
        sys.stderr.write(f"warning: {warning}\n")
    if args.dry_run:
        return _dry_run(suite, opts), suite, paths
    if getattr(suite.tests, "graded", True):  # llm-rubric with no LLM grader, `similar` with no embedding model:
        from evalrun.grading.select import GraderResolver  # one config error before any call

        GraderResolver(suite, opts.grader, None).check_capabilities(suite.tests, keys=True)
    runner: Any = Runner(suite, opts, progress=Progress(None, enabled=progress_on))
    if ray is not None:
        from evalrun.run.workers import RayExecutor, job_for

        runner = RayExecutor(suite, opts, job_for(paths, opts, cli_vars=cli_vars or None, strict=strict), **ray,
                             progress=runner.progress)
    elif workers > 1:
        from evalrun.run.workers import WorkerPool, single_reason

        why = single_reason(suite, opts)
        if why is None:
            runner = WorkerPool(suite, opts, workers, progress=runner.progress)
        else:
            print(f"evalrun: note: --workers {workers}: {why}; running in one process", file=sys.stderr)
    with sigterm_as_sigint() as got:  # Ctrl-C, or SIGTERM (CI cancellation), stops the run: summary, reports
        outcome = runner.run_sync() if hasattr(runner, "run_sync") else asyncio.run(stoppable(runner.run(), got))
    gc.unfreeze()  # back to the oldest generation (a process that goes on, e.g. tests calling main(), frees it)
    _report(outcome, outputs, args.no_table, github=args.format == "github" or (
        not args.format and os.environ.get("GITHUB_ACTIONS", "").lower() == "true"),
            run_id=outcome.run_id if opts.history else None, verbose=args.verbose, debug=args.debug,
            cell_max=args.table_cell_max_length)
    if outcome.interrupted:
        return EXIT_SIGTERM if got.term else EXIT_INTERRUPTED, suite, paths
    if outcome.summary["total"] == 0 and (opts.filter_pattern or opts.filter_failing or narrowing):
        print(no_match_message(opts.filter_pattern, opts.filter_failing, narrowing.given), file=sys.stderr)
        return EXIT_USAGE, suite, paths
    return exit_code(outcome.summary, args.pass_rate_threshold), suite, paths


def _report(outcome: RunOutcome, outputs: list[str], no_table: bool, *, github: bool = False,
            run_id: str | None = None, verbose: bool = False, debug: bool = False, cell_max: int | None = None) -> None:
    """The table, each failing case in full (`verbose`; `debug`: each ERROR case, with a user-code traceback), the
    -o reports, the summary (and GitHub's annotations) and where the results are."""
    if not no_table:
        print(console.table(outcome, cell_max=cell_max))
    if verbose or debug:
        text = console.failures(outcome, errors_only=not verbose)
        if text:
            print(text)
    for path in outputs:
        report.write(path, outcome)
    print(console.summary(outcome))
    if github:
        for line in report.error_commands(outcome):
            print(line)
        report.write_step_summary(outcome)
    if outputs:
        print("Wrote " + ", ".join(outputs))
    print(f"Results file: {outcome.results_file}" + (f" (run {run_id})" if run_id else ""))


def _dry_run(suite: Suite, opts: RunOptions) -> int:
    """`--dry-run`: calls counted, nothing called; priced litellm models' cost at ~4 characters a token."""
    cases, _ = split.cases(suite, opts.repeat, part=opts.shard, first_n=opts.filter_first_n,
                           select=split.selector(opts.filter_pattern, opts.filter_failing, opts.failing_kind))
    calls: Counter[str] = Counter()  # by provider name
    by_id: Counter[str] = Counter()
    grader_calls: Counter[str] = Counter()  # by assertion type
    chars: Counter[str] = Counter()  # by provider id
    max_tokens: dict[str, int] = {}
    for case in cases:
        pid = case.provider.id
        calls[case.provider.name] += 1
        by_id[pid] += 1
        with contextlib.suppress(Exception):  # the real run reports template errors per case
            prompt = templating.render_prompt(case.prompt.raw, case.vars, lenient=True)
            chars[pid] += len(prompt if isinstance(prompt, str) else str(prompt))
        mt = case.provider.config.get("max_tokens") or case.provider.config.get("maxTokens")
        if isinstance(mt, int):
            max_tokens[pid] = mt
        for spec in every_assertion(case.test.asserts):
            if getattr(spec.handler, "graded", False):
                grader_calls[spec.full_type] += int(getattr(spec.handler, "grader_calls", 0) or 0)
    n_cases = sum(calls.values())
    lines = [f"Dry run: {n_cases} cases, nothing was called.", f"Provider calls: {n_cases}",
             *(f"  {name}: {n}" for name, n in calls.most_common()),
             f"Grader calls (upper bound, before caching): {sum(grader_calls.values())}",
             *(f"  {t}: {n}" for t, n in sorted(grader_calls.items()))]
    costs = _estimate_costs(by_id, chars, max_tokens)
    known = [c for c in costs.values() if c is not None]
    if costs and len(known) == len(costs):
        lines.append(f"Estimated provider cost: ${sum(known):.4f} (grader cost not estimated)")
    elif known:
        unknown = ", ".join(p for p, c in costs.items() if c is None)
        lines.append(f"Estimated provider cost: ${sum(known):.4f} plus unknown for {unknown}")
    elif costs:
        lines.append("Estimated provider cost: unknown (no price known for these providers)")
    if sum(grader_calls.values()):
        from evalrun.credentials import strip_userinfo
        from evalrun.grading.select import GraderResolver

        chosen, origin = GraderResolver(suite, opts.grader, None).spec_for(None, None)
        lines.append(f"Grader: {strip_userinfo(chosen if isinstance(chosen, str) else chosen['id'])} ({origin})")
    print("\n".join(lines))
    if n_cases == 0 and (opts.filter_pattern or opts.filter_failing):
        print(no_match_message(opts.filter_pattern, opts.filter_failing), file=sys.stderr)
        return EXIT_USAGE
    return 0


def _estimate_costs(calls: Counter[str], chars: Counter[str], max_tokens: dict[str, int]) -> dict[str, float | None]:
    """Provider id -> estimated USD; None when unknown (no litellm price, or user code: only `echo` is free)."""
    from evalrun.providers import is_builtin

    result: dict[str, float | None] = {p: 0.0 if p == "echo" else None for p in calls if is_builtin(p)}
    if len(result) == len(calls):
        return result
    from evalrun.providers import ids, litellm_

    litellm: Any = litellm_.load_litellm()
    for pid in calls:
        if pid in result:
            continue
        try:
            model = ids.to_litellm_model(pid)
            price = litellm.model_cost.get(model) or litellm.model_cost.get(model.split("/", 1)[-1])
        except Exception:
            price = None
        result[pid] = None if not price or "input_cost_per_token" not in price else \
            chars[pid] / 4.0 * float(price["input_cost_per_token"]) + calls[pid] * \
            max_tokens.get(pid, ASSUMED_COMPLETION_TOKENS) * float(price.get("output_cost_per_token") or 0.0)
    return result


def merge(args: argparse.Namespace) -> int:
    """`evalrun merge RESULTS... [-o FILE]`: exit code by eval's rules, over the merged cases."""
    check_env(args.pass_rate_threshold)
    for path in args.output:
        report.check_path(path)
    out = Path(args.results_file) if args.results_file else Path(".evalrun") / "merged.jsonl"
    outcome = split.merge([Path(p) for p in args.results], out)
    _report(outcome, args.output, args.no_table)
    return exit_code(outcome.summary, args.pass_rate_threshold)


def rebuild_reports(args: argparse.Namespace) -> int:
    """`evalrun report RESULTS -o FILE...`: reports from a results file; a case written twice counts its last."""
    path = Path(args.results)
    if not path.is_file():
        raise UsageError(f"no results file {args.results!r}", key="RESULTS",
                         hint="give the .jsonl results file of a run (default .evalrun/last-run.jsonl) "
                              "or its -o .json report")
    if not args.output:
        raise UsageError("give at least one -o FILE", key="--output",
                         hint=f"the format comes from the extension: {', '.join(report.FORMATS)}")
    for out in args.output:
        report.check_path(out)
    hint = f"give {store.ACCEPTED}"
    with contextlib.ExitStack() as stack:
        jsonl = store.as_jsonl(path, stack, key="RESULTS", hint=hint)
        latest: dict[str, tuple[int, dict]] = {}
        for offset, rec in store.read_records(jsonl, key="RESULTS", hint=hint, shown=path):
            latest[rec["id"]] = (offset, rec)
        tally = Tally()
        for offset, rec in latest.values():
            tally.add(rec, offset)
        if not latest:
            raise UsageError(f"{args.results!r} holds no result records", key="RESULTS")
        tally.finished = tally.started
        outcome = RunOutcome(Suite(description=None, prompts=(), providers=(), tests=(), files=()), tally, jsonl)
        for out in args.output:
            report.write(out, outcome)
    print(f"Wrote {', '.join(args.output)} from {len(latest)} results in {args.results}")
    return 0
