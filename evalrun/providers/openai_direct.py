"""A lean transport for OpenAI-compatible servers (vLLM, llama.cpp, Ollama, a gateway): one aiohttp POST, the
request body litellm would send, at ~0.4 ms of CPU a call against litellm's 8-10 (benchmarks/README.md).
`EVALRUN_LLM_TRANSPORT=litellm` turns it off; its errors are classified by `litellm_errors` as litellm's are.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
from typing import Any

from evalrun.providers.http_ import LoopSession, proxy_for

#: Request-body parameters litellm forwards unchanged to an OpenAI-compatible chat completions endpoint.
BODY_PARAMS = frozenset({
    "temperature", "max_tokens", "max_completion_tokens", "top_p", "stop", "seed", "n", "presence_penalty",
    "frequency_penalty", "logit_bias", "user", "response_format", "logprobs", "top_logprobs",
})  # tools / tool_choice stay with litellm, which may transform them (MCP tools, per-model support)
#: Parameters that shape the HTTP call rather than the body.
CALL_PARAMS = frozenset({"api_base", "api_key", "timeout", "num_retries", "max_retries", "extra_headers",
                         "organization"})


class DirectError(Exception):
    """A failed call, worded as litellm words it ("Request timed out", "Connection error: ...", a JSON parse
    error, "not a chat completion: ..."); `status_code` and `headers` for a non-2xx reply."""

    def __init__(self, message: str, status: int | None = None, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.message, self.status_code, self.headers = message, status, headers


@functools.cache
def priced_models() -> frozenset[str]:
    """Model names in litellm's bundled price map (the one it prices with under LITELLM_LOCAL_MODEL_COST_MAP, as
    evalrun sets it), read from its JSON file without importing litellm (~30 ms, once)."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.find_spec("litellm")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        try:
            return frozenset(json.loads((Path(folder) / "model_prices_and_context_window_backup.json").read_text(
                encoding="utf-8")))
        except (OSError, ValueError):
            continue
    return frozenset()


class DirectOpenAI:
    def __init__(self) -> None:
        self._sessions = LoopSession(limit=0)  # no limit of its own: the transport's semaphore bounds requests

    @staticmethod
    def accepts(model: str, kwargs: dict[str, Any]) -> bool:
        """An OpenAI-compatible server at `api_base` (chat completions, not the Responses API), parameters litellm
        forwards as they are, and a model name litellm has no price for (litellm prices a priced one)."""
        if not model.startswith("openai/") or model.startswith("openai/responses/") or not kwargs.get("api_base"):
            return False
        if os.environ.get("EVALRUN_LLM_TRANSPORT", "").strip().lower() == "litellm":
            return False
        if not all(k in BODY_PARAMS or k in CALL_PARAMS for k in kwargs):
            return False
        priced = priced_models()
        return model.split("/", 1)[1] not in priced and model not in priced

    async def aclose(self) -> None:
        await self._sessions.aclose()

    async def complete(self, model: str, messages: list[dict[str, Any]], kwargs: dict[str, Any]) -> Any:
        """POST {api_base}/chat/completions; the reply's JSON (raises DirectError)."""
        import aiohttp

        body: dict[str, Any] = {"model": model.split("/", 1)[1], "messages": messages}
        body.update((k, v) for k, v in kwargs.items() if k in BODY_PARAMS and v is not None)
        headers = {"Content-Type": "application/json"}
        if kwargs.get("api_key"):
            headers["Authorization"] = f"Bearer {kwargs['api_key']}"
        if kwargs.get("organization"):
            headers["OpenAI-Organization"] = str(kwargs["organization"])
        headers.update({str(k): str(v) for k, v in (kwargs.get("extra_headers") or {}).items()})
        url = str(kwargs["api_base"]).rstrip("/") + "/chat/completions"
        timeout = aiohttp.ClientTimeout(total=float(kwargs.get("timeout") or 600.0))
        try:
            session = await self._sessions.get()
            async with session.post(url, data=json.dumps(body), headers=headers, timeout=timeout,
                                    proxy=proxy_for(url)) as resp:
                text = (await resp.read()).decode("utf-8", errors="replace")
                status, resp_headers = resp.status, dict(resp.headers)
        except asyncio.TimeoutError:
            raise DirectError("Request timed out") from None
        except aiohttp.ClientError as e:
            raise DirectError(f"Connection error: {e}") from None
        if status >= 300:
            raise DirectError(text.strip() or f"HTTP {status}", status, resp_headers)
        try:
            data = json.loads(text)
        except ValueError as e:
            raise DirectError(str(e)) from None  # "Expecting value: ...", as litellm words it
        if not isinstance(data, dict) or "choices" not in data:
            raise DirectError(f"not a chat completion: {text[:200]!r}")
        return data
