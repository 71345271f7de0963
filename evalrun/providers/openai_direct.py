"""A lean transport for OpenAI-compatible servers (vLLM, llama.cpp, Ollama, LocalAI, a gateway): one aiohttp POST.

For `openai/<model>` at an `api_base`, with only parameters litellm passes to such a server unchanged and a model
litellm has no price for, this sends the request body litellm would (litellm spends ~5-10 ms of CPU per call,
this a few hundred microseconds: benchmarks/README.md, "LLM path CPU"). Its exceptions are classified by
`litellm_errors.to_provider_error` as litellm's are. `EVALRUN_LLM_TRANSPORT=litellm` turns it off.
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any

from evalrun.providers.http_session import LoopSession, proxy_for

#: Request-body parameters litellm forwards unchanged to an OpenAI-compatible chat completions endpoint.
BODY_PARAMS = frozenset({
    "temperature", "max_tokens", "max_completion_tokens", "top_p", "stop", "seed", "n", "presence_penalty",
    "frequency_penalty", "logit_bias", "user", "response_format", "logprobs", "top_logprobs",
})  # tools / tool_choice stay with litellm, which may transform them (MCP tools, per-model support)
#: Parameters that shape the HTTP call rather than the body.
CALL_PARAMS = frozenset({"api_base", "api_key", "timeout", "num_retries", "max_retries", "extra_headers",
                         "organization"})


class HTTPStatusError(Exception):
    """A non-2xx reply (named like the attributes litellm's exceptions carry, for to_provider_error)."""

    def __init__(self, status: int, message: str, headers: dict[str, str]) -> None:
        super().__init__(message)
        self.status_code = status
        self.message = message
        self.headers = headers


class Timeout(Exception):  # noqa: N818 - the class name is what to_provider_error recognises
    """The request took longer than `timeout` seconds."""


class APIConnectionFailure(Exception):
    """The server could not be reached or dropped the connection ("connection error: ...")."""


class InvalidJSON(Exception):
    """The server answered 2xx with a body that is not JSON ("invalid json: ...")."""


def enabled() -> bool:
    return os.environ.get("EVALRUN_LLM_TRANSPORT", "").strip().lower() != "litellm"


_PRICED: frozenset[str] | None = None


def priced_models() -> frozenset[str]:
    """Model names in litellm's bundled price map, read from its JSON file without importing litellm (~30 ms,
    once). The same map litellm prices with when LITELLM_LOCAL_MODEL_COST_MAP is set, as evalrun sets it."""
    global _PRICED
    if _PRICED is None:
        import importlib.util
        from pathlib import Path

        names: frozenset[str] = frozenset()
        spec = importlib.util.find_spec("litellm")
        for folder in (spec.submodule_search_locations or []) if spec else []:
            path = Path(folder) / "model_prices_and_context_window_backup.json"
            try:
                names = frozenset(json.loads(path.read_text(encoding="utf-8")))
            except (OSError, ValueError):
                continue
            break
        _PRICED = names
    return _PRICED


class NotAChatCompletion(Exception):
    """The server answered 2xx with JSON that has no `choices` (not a chat completion)."""


class DirectOpenAI:
    """One aiohttp session per event loop (connections kept alive), created on the first call."""

    def __init__(self) -> None:
        # No connection limit of our own: the transport's semaphore bounds the requests in flight.
        self._sessions = LoopSession(limit=0)

    @staticmethod
    def accepts(model: str, kwargs: dict[str, Any]) -> bool:
        """An OpenAI-compatible server at `api_base`, parameters litellm forwards as they are, and a model name
        litellm has no price for (a priced name goes through litellm, which prices the reply)."""
        if not model.startswith("openai/") or not kwargs.get("api_base") or not enabled():
            return False
        if model.startswith("openai/responses/"):  # the Responses API: litellm's bridge, not chat/completions
            return False
        if not all(k in BODY_PARAMS or k in CALL_PARAMS for k in kwargs):
            return False
        name = model.split("/", 1)[1]
        priced = priced_models()
        return name not in priced and model not in priced

    async def aclose(self) -> None:
        await self._sessions.aclose()

    async def complete(self, model: str, messages: list[dict[str, Any]], kwargs: dict[str, Any]) -> Any:
        """POST {api_base}/chat/completions; the reply's JSON (raises the exceptions above)."""
        import aiohttp

        body: dict[str, Any] = {"model": model.split("/", 1)[1], "messages": messages}
        for k, v in kwargs.items():
            if k in BODY_PARAMS and v is not None:
                body[k] = v
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
                data = await resp.read()
                status = resp.status
                resp_headers = dict(resp.headers)
        except asyncio.TimeoutError:
            raise Timeout("Request timed out") from None
        except aiohttp.ClientError as e:
            raise APIConnectionFailure(f"Connection error: {e}") from None
        text = data.decode("utf-8", errors="replace")
        if status >= 300:
            raise HTTPStatusError(status, text.strip() or f"HTTP {status}", resp_headers)
        try:
            data = json.loads(text)
        except ValueError as e:
            raise InvalidJSON(str(e)) from None  # "Expecting value: ...", as litellm words it
        if not isinstance(data, dict) or "choices" not in data:
            raise NotAChatCompletion(f"not a chat completion: {text[:200]!r}")
        return data
