"""`echo`: returns the rendered prompt as the output (no network; the standard way to test assertions)."""

from __future__ import annotations

import time

from evalrun.providers.base import CallContext
from evalrun.providers.replies import prompt_text
from evalrun.types import NO_TOKENS, Messages, Output, ProviderSpec


class EchoProvider:
    """Echoes the prompt; chat prompts come back as their JSON text (replies.prompt_text)."""

    def __init__(self, spec: ProviderSpec) -> None:
        self.id = spec.id
        self.label = spec.name

    async def call(self, prompt: str | Messages, ctx: CallContext) -> Output:
        start = time.perf_counter()
        text = prompt if isinstance(prompt, str) else prompt_text(prompt)
        # positional (text, raw, tokens, cost, latency_ms): keyword arguments cost more than the call itself
        return Output(text, None, NO_TOKENS, None, (time.perf_counter() - start) * 1000.0)
