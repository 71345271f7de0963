"""The public Python API: `evaluate("evalrun.yaml", max_concurrency=8)` returns the outcome (docs/running.md); from
async code await `evaluate_async()`."""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evalrun import config, report
from evalrun.errors import ConfigWarning
from evalrun.run.options import RunOptions
from evalrun.run.runner import Runner
from evalrun.run.tally import RunOutcome


async def evaluate_async(configs: str | Path | Sequence[str | Path], *, vars: dict[str, Any] | None = None,
                         max_concurrency: int | None = None, repeat: int | None = None,
                         grader: str | None = None, use_cache: bool = True, timeout_s: float | None = None,
                         results_file: str | Path | None = None, outputs: Sequence[str] = (),
                         filter_pattern: str | None = None, filter_first_n: int | None = None,
                         history: bool = False, strict: bool | None = None) -> RunOutcome:
    """Load, run and write the `outputs` reports; returns the outcome (ConfigError for a bad config). Results go to
    `results_file`, else .evalrun/runs/RUN_ID.jsonl next to the config; `history=True` records the run for
    `evalrun compare`. What promptfoo lets pass is a ConfigWarning, or a ConfigError with `strict=True` (default:
    EVALRUN_STRICT)."""
    paths = [str(configs)] if isinstance(configs, (str, Path)) else [str(p) for p in configs]
    suite = config.load(paths, cli_vars=vars, strict=strict)
    for text in suite.warnings:
        warnings.warn(text, ConfigWarning, stacklevel=3)
    for path in outputs:
        report.check_path(path)
    opts = RunOptions.merge(suite.evaluate_options, max_concurrency=max_concurrency, repeat=repeat,
                            timeout_s=timeout_s, no_cache=not use_cache, grader=grader,
                            filter_pattern=filter_pattern, filter_first_n=filter_first_n,
                            results_file=str(results_file) if results_file else None, progress=False,
                            history=history)
    outcome = await Runner(suite, opts).run()
    for path in outputs:
        report.write(path, outcome)
    return outcome


def evaluate(configs: str | Path | Sequence[str | Path], **kwargs: Any) -> RunOutcome:
    """Synchronous `evaluate_async` (keyword arguments as there)."""
    return asyncio.run(evaluate_async(configs, **kwargs))
