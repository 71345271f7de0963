"""Provider construction: `echo`, `exec:CMD`, `file://provider.py[:fn]` / `python:`, `file://provider.js`
(custom.py), `http(s)://...` (http_.py); every other id is a litellm model (litellm_.py; importing this package
never imports litellm).
"""

from __future__ import annotations

import time
from typing import Any

from evalrun.jsnode import JS_EXTS
from evalrun.providers.base import CallContext, Provider, prompt_text
from evalrun.types import NO_TOKENS, Messages, Output, ProviderSpec

__all__ = ["CallContext", "Provider", "build", "is_builtin", "is_http", "is_js_provider"]


def is_builtin(provider_id: str) -> bool:
    """True for the kinds implemented here (no model call, never litellm)."""
    return (provider_id == "echo" or provider_id.startswith(("exec:", "python:")) or is_http(provider_id)
            or (provider_id.startswith("file://") and ".py" in provider_id) or is_js_provider(provider_id))


def is_http(provider_id: str) -> bool:
    """promptfoo's HTTP provider: `http(s)://URL`, or `http` / `https` / `https:any-name` with `config.url`."""
    return provider_id in ("http", "https") or provider_id.startswith(("http:", "https:"))


def is_js_provider(provider_id: str) -> bool:
    """`file://x.js` / `.cjs` / `.mjs` / TypeScript, or a bare relative path to one (promptfoo's isJavascriptFile)."""
    path = provider_id[len("file://"):] if provider_id.startswith("file://") else provider_id
    if ":" in path.replace("\\", "/").split("/")[-1]:
        return False  # `openai:x.js`-like ids are model names, not files
    return path.lower().endswith(JS_EXTS) and (provider_id.startswith("file://") or "://" not in provider_id)


class EchoProvider:
    """`echo`: the rendered prompt as the output (chat prompts as their JSON text)."""

    def __init__(self, spec: ProviderSpec) -> None:
        self.id = spec.id
        self.label = spec.name

    async def call(self, prompt: str | Messages, ctx: CallContext) -> Output:
        start = time.perf_counter()
        text = prompt if isinstance(prompt, str) else prompt_text(prompt)
        # positional (text, raw, tokens, cost, latency_ms): keyword arguments cost more than the call itself
        return Output(text, None, NO_TOKENS, None, (time.perf_counter() - start) * 1000.0)


def build(spec: ProviderSpec, base_dir: str = ".", transport: Any = None) -> Provider:
    """Build a provider from its spec; ConfigError (with the spec's location) for a bad one."""
    pid = spec.id
    if pid == "echo":
        return EchoProvider(spec)
    if pid.startswith("exec:"):
        from evalrun.providers.custom import ExecProvider

        return ExecProvider(spec, base_dir)
    if pid.startswith("python:") or (pid.startswith("file://") and ".py" in pid):
        from evalrun.providers.custom import PythonProvider

        return PythonProvider(spec, base_dir)
    if is_js_provider(pid):
        from evalrun.providers.custom import JsProvider

        return JsProvider(spec, base_dir)
    if is_http(pid):
        from evalrun.providers.http_ import HttpProvider

        return HttpProvider(spec, on_event=getattr(transport, "on_event", None), base_dir=base_dir)
    from evalrun.providers.litellm_ import LiteLLMProvider  # the wrapper; litellm itself stays lazy

    return LiteLLMProvider(spec, transport)
