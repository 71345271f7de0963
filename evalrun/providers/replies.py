"""A user's provider reply as an Output, shared by the builtin (non-litellm) providers (python, JavaScript, exec,
http)."""

from __future__ import annotations

import json
from typing import Any

from evalrun.errors import ProviderError
from evalrun.types import Messages, Output, TokenUsage


def prompt_text(prompt: str | Messages) -> str:
    """The prompt as one string, as promptfoo hands it to providers that take text (echo, exec, python,
    JavaScript): a chat prompt as its JSON, indented by 2 as promptfoo's JSON.stringify(messages, null, 2)."""
    return prompt if isinstance(prompt, str) else json.dumps(prompt, ensure_ascii=False, indent=2)


def as_text(value: Any) -> str:
    """Provider output as text: strings as they are, anything else as JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def _usage(raw: Any) -> TokenUsage:
    if not isinstance(raw, dict):
        return TokenUsage()

    def num(*keys: str) -> int:
        for k in keys:
            v = raw.get(k)
            if isinstance(v, (int, float)):
                return int(v)
        return 0

    prompt, completion = num("prompt", "prompt_tokens"), num("completion", "completion_tokens")
    total = num("total", "total_tokens") or prompt + completion
    return TokenUsage(prompt, completion, total, num("cached"))


def output_from_reply(reply: Any, *, latency_ms: float, source: str) -> Output:
    """promptfoo's ProviderResponse (`{output, error, tokenUsage, cost, metadata}`) or a bare value -> Output."""
    if isinstance(reply, dict) and ("output" in reply or "error" in reply):
        if reply.get("error"):
            raise ProviderError(f"{source}: {reply['error']}")
        cost = reply.get("cost")
        metadata = reply.get("metadata")
        out = reply.get("output")
        return Output(
            text=as_text(out),
            value=None if isinstance(out, str) or out is None else out,
            raw=reply,
            tokens=_usage(reply.get("tokenUsage") or reply.get("token_usage")),
            cost=float(cost) if isinstance(cost, (int, float)) else None,
            latency_ms=latency_ms,
            cached=bool(reply.get("cached", False)),
            metadata=dict(metadata) if isinstance(metadata, dict) else {},
        )
    return Output(text=as_text(reply), raw=reply, latency_ms=latency_ms)
