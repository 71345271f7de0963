"""The run engine: cases in, results streamed to disk, a tally for the reports.

    Runner(suite, RunOptions(...)).run() -> RunOutcome        (await it inside the one asyncio.run)
"""

from __future__ import annotations

from evalrun.run.options import RunOptions
from evalrun.run.runner import Runner, RunOutcome

__all__ = ["RunOptions", "RunOutcome", "Runner"]
