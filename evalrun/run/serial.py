"""Runs whose cases depend on earlier cases' outputs, which then run one case at a time in promptfoo's order.

    serial_reason(suite) -> str | None

`options.storeOutputAs` (a later test reads an earlier output as a var) and prompts that read `_conversation`
(the earlier turns of a thread, run/conversation.py), as promptfoo sets its concurrency to 1 for both.
"""

from __future__ import annotations

from evalrun.types import Suite


def serial_reason(suite: Suite) -> str | None:
    """Why the suite's cases must run one at a time, in order, in one process; None when they need not."""
    from evalrun.run.conversation import uses_conversation

    if any(uses_conversation(p) for p in suite.prompts):
        return "prompts read `_conversation` (earlier turns of the same test sequence)"
    serial = getattr(suite.tests, "store_output_as", None)  # a streamed TestList knows it from loading
    if serial is None:
        serial = any(t.options.get("storeOutputAs") for t in suite.tests)
    return "storeOutputAs makes tests depend on earlier outputs" if serial else None
