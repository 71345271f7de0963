"""The provider contract (an async `call()` returning an Output, or raising ProviderError, `retryable` for rate
limits, 5xx, connection errors and timeouts), and a user's reply as an Output."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Protocol

from evalrun.errors import ProviderError
from evalrun.types import Messages, Output, TokenUsage, fast_init


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


def prompt_text(prompt: str | Messages) -> str:
    """The prompt as text, as promptfoo hands it to user providers (a chat prompt as JSON indented by 2)."""
    return prompt if isinstance(prompt, str) else json.dumps(prompt, ensure_ascii=False, indent=2)


def as_text(value: Any) -> str:
    """Provider output as text: strings as they are, anything else as JSON."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def _usage(raw: Any) -> TokenUsage:
    if not isinstance(raw, dict):
        return TokenUsage()

    def num(*keys: str) -> int:
        return next((int(v) for k in keys if isinstance(v := raw.get(k), (int, float))), 0)

    prompt, completion = num("prompt", "prompt_tokens"), num("completion", "completion_tokens")
    total = num("total", "total_tokens") or prompt + completion
    return TokenUsage(prompt, completion, total, num("cached"))


def output_from_reply(reply: Any, *, latency_ms: float, source: str) -> Output:
    """promptfoo's ProviderResponse (`{output, error, tokenUsage, cost, metadata}`) or a bare value -> Output."""
    if isinstance(reply, dict) and ("output" in reply or "error" in reply):
        if reply.get("error"):
            raise ProviderError(f"{source}: {reply['error']}")
        cost, metadata, out = reply.get("cost"), reply.get("metadata"), reply.get("output")
        return Output(text=as_text(out), value=None if isinstance(out, str) or out is None else out, raw=reply,
                      tokens=_usage(reply.get("tokenUsage") or reply.get("token_usage")),
                      cost=float(cost) if isinstance(cost, (int, float)) else None, latency_ms=latency_ms,
                      cached=bool(reply.get("cached", False)),
                      metadata=dict(metadata) if isinstance(metadata, dict) else {})
    return Output(text=as_text(reply), raw=reply, latency_ms=latency_ms)
