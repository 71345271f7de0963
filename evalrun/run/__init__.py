"""The run engine: cases in, results streamed to disk, a tally for the reports.

    Runner(suite, RunOptions(...)).run() -> RunOutcome        (await it inside the one asyncio.run)

Runner, RunOptions and RunOutcome are imported on first use: `validate` reads `evalrun.run.progress` and
must not pay for the runner's imports (asyncio, the assertion engine, the providers).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from evalrun.run.options import RunOptions
    from evalrun.run.outcome import RunOutcome
    from evalrun.run.runner import Runner

__all__ = ["RunOptions", "RunOutcome", "Runner"]


def __getattr__(name: str) -> Any:
    if name == "RunOptions":
        from evalrun.run.options import RunOptions

        return RunOptions
    if name == "Runner":
        from evalrun.run.runner import Runner

        return Runner
    if name == "RunOutcome":
        from evalrun.run.outcome import RunOutcome

        return RunOutcome
    raise AttributeError(f"module 'evalrun.run' has no attribute {name!r}")
