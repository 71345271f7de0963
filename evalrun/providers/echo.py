"""`echo`: returns the rendered prompt as the output (no network; the standard way to test assertions)."""

from __future__ import annotations

import json
import time

from evalrun.providers.base import CallContext
from evalrun.types import Messages, Output, ProviderSpec


class EchoProvider:
    """Echoes the prompt; chat prompts come back as their JSON text."""

    def __init__(self, spec: ProviderSpec) -> None:
        self.id = spec.id
        self.label = spec.name

    async def call(self, prompt: str | Messages, ctx: CallContext) -> Output:
        start = time.perf_counter()
        text = prompt if isinstance(prompt, str) else json.dumps(prompt, ensure_ascii=False)
        return Output(text=text, latency_ms=(time.perf_counter() - start) * 1000.0)
