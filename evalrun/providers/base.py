"""The provider contract: an object with an id and an async `call()` returning an Output.

Providers are built from ProviderSpecs by `providers.build(spec, base_dir)`. A provider raises ProviderError
when it cannot produce an output; `retryable=True` marks rate limits, 5xx, connection errors and timeouts,
which the runner retries with back-off (honouring `retry_after`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from evalrun.frozen_init import fast_init
from evalrun.types import Messages, Output


@fast_init  # made per case
@dataclass(frozen=True)
class CallContext:
    """What a provider may know about the call besides the prompt."""

    vars: dict[str, Any] = field(default_factory=dict)
    prompt_label: str = ""
    test_description: str | None = None
    use_cache: bool = True
    prompt_config: dict[str, Any] = field(default_factory=dict)  # the prompt's own `config` (promptfoo)


class Provider(Protocol):
    id: str
    label: str

    async def call(self, prompt: str | Messages, ctx: CallContext) -> Output:
        ...
