"""promptfoo's `_conversation`: the earlier turns of a multi-turn test sequence, as a prompt variable.

As promptfoo 0.121.20 does (src/evaluator.ts): a thread is one provider, one prompt and the test's
`metadata.conversationId` (tests without one share a thread), in run order; a turn is
`{prompt, input, output, metadata}`: `prompt` the rendered prompt (the message list of a chat prompt), `input`
its last message's content (else the whole prompt), `output` the provider's output ("" when it failed). A test
with `options.disableConversationVar`, or the environment variable PROMPTFOO_DISABLE_CONVERSATION_VAR, leaves
`_conversation` unset (an empty list). A run whose prompts read it runs one case at a time (run/split.py serial).
"""

from __future__ import annotations

import contextlib
import json
import os
from typing import Any

from evalrun.types import Case, PromptSpec

NAME = "_conversation"


def uses_conversation(prompt: PromptSpec) -> bool:
    """Whether the prompt's template reads `_conversation` (a prompt function cannot: promptfoo parses templates)."""
    if prompt.function:
        return False
    raw = prompt.raw
    sources = [raw] if isinstance(raw, str) else [m.get("content") for m in raw]
    from evalrun import template_names

    return any(isinstance(s, str) and NAME in s and NAME in template_names.variables_of(s) for s in sources)


def _enabled(case: Case) -> bool:
    if os.environ.get("PROMPTFOO_DISABLE_CONVERSATION_VAR", "").strip().lower() in ("1", "true", "yes"):
        return False
    return not case.test.options.get("disableConversationVar")


class Conversations:
    """The threads of one run (the run is serial while prompts read them: no locking needed)."""

    def __init__(self) -> None:
        self._threads: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
        self._uses: dict[int, bool] = {}

    def applies(self, case: Case) -> bool:
        prompt = case.prompt
        uses = self._uses.get(id(prompt))
        if uses is None:
            uses = self._uses[id(prompt)] = uses_conversation(prompt)
        return uses and _enabled(case)

    @staticmethod
    def _key(case: Case) -> tuple[Any, ...]:
        return case.provider.name, case.prompt.id, case.prompt.label, case.test.metadata.get("conversationId")

    def history(self, case: Case) -> list[dict[str, Any]]:
        return list(self._threads.get(self._key(case), ()))

    def record(self, case: Case, rendered: Any, output: Any, metadata: dict[str, Any] | None) -> None:
        if isinstance(rendered, str):  # promptfoo keeps a rendered prompt that is JSON as parsed JSON
            with contextlib.suppress(ValueError):
                rendered = json.loads(rendered)
        last = rendered[-1] if isinstance(rendered, list) and rendered else None
        content = last.get("content") if isinstance(last, dict) else last
        self._threads.setdefault(self._key(case), []).append({
            "prompt": rendered, "input": content or rendered, "output": output or "", "metadata": metadata or {}})
