"""Every model call, and the only import of litellm (lazily): response cache -> identical requests in flight
coalesced -> retries, each attempt under the semaphore -> litellm, or http_.DirectOpenAI where it applies."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import gc
import json
import os
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from evalrun.cache import ResponseCache, cache_key, credential_fingerprint
from evalrun.errors import ProviderError
from evalrun.providers import ids
from evalrun.providers.base import CallContext
from evalrun.providers.http_ import DirectOpenAI
from evalrun.providers.litellm_errors import to_provider_error, with_attempts
from evalrun.retry import RetryPolicy, call_with_retries, describe_retry
from evalrun.types import Messages, Output, ProviderSpec, TokenUsage

__all__ = ["LLMTransport", "LiteLLMProvider", "load_litellm", "DEFAULT_TIMEOUT"]

#: Seconds per HTTP attempt when the config sets no `timeout`.
DEFAULT_TIMEOUT = 300.0

_litellm: Any = None


def load_litellm() -> Any:
    """Import and configure litellm once (quiet, offline price map, no retries of its own)."""
    global _litellm
    if _litellm is None:
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        import litellm

        litellm.suppress_debug_info = True
        litellm.telemetry = False
        # ~300,000 objects that live until exit: every full collection walked them, a 100-300 ms stall mid-run
        gc.freeze()
        _litellm = litellm
    return _litellm


async def _litellm_module() -> Any:
    # the first import takes seconds: off the event loop, the progress line keeps moving
    return _litellm if _litellm is not None else await asyncio.to_thread(load_litellm)


@dataclasses.dataclass(slots=True)
class _Flight:
    """One request in flight, shared by every identical caller."""

    task: asyncio.Task[Output]
    waiters: int = 0


class LLMTransport:
    """Chat completions for one run; `on_event` receives lines such as ``retry 2/5 after 429 (back-off 1s) [m]``."""

    def __init__(self, max_concurrency: int = 4, use_cache: bool = True,
                 on_event: Callable[[str], None] | None = None, *, cache: ResponseCache | None = None,
                 policy: RetryPolicy | None = None) -> None:
        self.max_concurrency = max(1, int(max_concurrency))
        self.use_cache = use_cache
        self.on_event = on_event
        self.cache = cache if cache is not None else ResponseCache()
        self.policy = policy if policy is not None else RetryPolicy.from_env()
        self._sem = asyncio.Semaphore(self.max_concurrency)
        self._sem_loop: asyncio.AbstractEventLoop | None = None
        self._inflight: dict[str, _Flight] = {}
        self._direct = DirectOpenAI()
        self._stats = {"calls": 0, "requests": 0, "cache_hits": 0, "coalesced": 0, "retries": 0, "errors": 0}

    async def aclose(self) -> None:
        """Close the cache file and the HTTP clients."""
        self.cache.close()
        with contextlib.suppress(Exception):
            await self._direct.aclose()
        if _litellm is None:
            return
        with contextlib.suppress(Exception):
            await _litellm.close_litellm_async_clients()
            _litellm.in_memory_llm_clients_cache.flush_cache()

    def _semaphore(self) -> asyncio.Semaphore:
        """The concurrency bound of the running event loop (a later asyncio.run may reuse the transport)."""
        loop = asyncio.get_running_loop()
        if self._sem_loop is not loop:
            self._sem, self._sem_loop = asyncio.Semaphore(self.max_concurrency), loop
        return self._sem

    def stats(self) -> dict[str, int]:
        """calls (chat() invocations), requests (HTTP attempts), cache_hits, coalesced, retries, errors."""
        return dict(self._stats)

    async def chat(self, model: str, messages: Messages, params: dict[str, Any], *,
                   use_cache: bool | None = None) -> Output:
        """One chat completion (`params`: litellm kwargs; `use_cache=False`: no cache, no coalescing)."""
        self._stats["calls"] += 1
        if not (self.use_cache if use_cache is None else use_cache):
            return await self._request(model, messages, params, None)
        key = cache_key(model, messages, params)
        hit = self.cache.get(key)
        if hit is not None:
            self._stats["cache_hits"] += 1
            return _as_cached(_output_from_value(hit))
        fkey = key + credential_fingerprint(params)  # never one request for two providers' credentials
        flight = self._inflight.get(fkey)
        shared = flight is not None
        if flight is None:
            flight = _Flight(asyncio.ensure_future(self._request(model, messages, params, key)))
            self._inflight[fkey] = flight
            flight.task.add_done_callback(functools.partial(self._landed, fkey))
        else:
            self._stats["coalesced"] += 1
        flight.waiters += 1
        try:
            out = await asyncio.shield(flight.task)
        except asyncio.CancelledError:
            flight.waiters -= 1
            if flight.waiters == 0 and not flight.task.done():
                if self._inflight.get(fkey) is flight:
                    del self._inflight[fkey]  # a newcomer must start afresh, not join a cancelled request
                flight.task.cancel()
            raise
        flight.waiters -= 1
        return _as_cached(out) if shared else out

    async def embed(self, model: str, texts: list[str], params: dict[str, Any]) -> list[list[float]]:
        """Embeddings of `texts` in one request, cached and retried like completions. Raises ProviderError."""
        self._stats["calls"] += 1
        key = cache_key(model, {"embed": list(texts)}, params) if self.use_cache else None
        hit = self.cache.get(key) if key is not None else None
        if hit is not None and isinstance(hit.get("embeddings"), list):
            self._stats["cache_hits"] += 1
            return [list(map(float, v)) for v in hit["embeddings"]]
        litellm = await _litellm_module()
        kwargs = _call_kwargs(model, params)

        async def send() -> list[list[float]]:
            response = await litellm.aembedding(model=model, input=list(texts), **kwargs)
            data = _plain_json(response).get("data") or []
            vectors = [d.get("embedding") for d in sorted(data, key=lambda d: d.get("index", 0))]
            if len(vectors) != len(texts) or not all(isinstance(v, list) and v for v in vectors):
                raise ProviderError(f"{model}: the embedding reply has {len(vectors)} vector(s) for {len(texts)}")
            return [list(map(float, v)) for v in vectors]

        out: list[list[float]] = await self._retried(model, params, send)
        if key is not None:
            self.cache.put(key, {"embeddings": out}, model=model, params=params)
        return out

    def _landed(self, key: str, task: asyncio.Task[Output]) -> None:
        flight = self._inflight.get(key)
        if flight is not None and flight.task is task:
            del self._inflight[key]
        if not task.cancelled():
            task.exception()  # retrieved here so an unawaited failure never warns

    async def _request(self, model: str, messages: Messages, params: dict[str, Any], key: str | None) -> Output:
        kwargs = _call_kwargs(model, params)
        direct = self._direct if self._direct.accepts(model, kwargs) else None
        litellm: Any = None if direct is not None else await _litellm_module()
        # `tools` would send litellm down its MCP-gateway path, which needs the optional `mcp` package (without it
        # every call with tools fails); evalrun passes tools as they are
        extra = {"_skip_mcp_handler": True} if direct is None and "tools" in kwargs and _has_mcp_path() else {}

        async def send() -> Output:
            start = time.perf_counter()
            if direct is not None:
                response = await direct.complete(model, [dict(m) for m in messages], kwargs)
            else:
                response = await litellm.acompletion(model=model, messages=[dict(m) for m in messages], **kwargs,
                                                     **extra)
            return _output_from_response(litellm, model, response, (time.perf_counter() - start) * 1000.0)

        out: Output = await self._retried(model, params, send)
        if key is not None:
            self.cache.put(key, _value_from_output(out), model=model, params=params)
        return out

    async def _retried(self, model: str, params: dict[str, Any], send: Callable[[], Awaitable[Any]]) -> Any:
        """`send()` under the semaphore, retried; any exception a ProviderError that says how many attempts."""
        attempts = 0

        async def attempt() -> Any:
            nonlocal attempts
            attempts += 1
            async with self._semaphore():
                self._stats["requests"] += 1
                try:
                    return await send()
                except (asyncio.CancelledError, ProviderError):
                    raise
                except Exception as exc:
                    raise to_provider_error(exc, model, params) from exc

        def on_retry(next_attempt: int, total: int, err: ProviderError, wait: float) -> None:
            self._stats["retries"] += 1
            if self.on_event is not None:
                self.on_event(f"{describe_retry(next_attempt, total, err, wait)} [{model}]")

        try:
            return await call_with_retries(attempt, self.policy, on_retry)
        except ProviderError as err:
            self._stats["errors"] += 1
            raise with_attempts(err, attempts) from err.__cause__


def _call_kwargs(model: str, params: dict[str, Any]) -> dict[str, Any]:
    """One attempt's litellm kwargs: no retries of litellm's own; an OpenAI-compatible server gets a key."""
    kwargs = {"timeout": DEFAULT_TIMEOUT, **params, "num_retries": 0, "max_retries": 0}
    if model.startswith("openai/") and not kwargs.get("api_key"):
        key = os.environ.get("OPENAI_API_KEY") or ("sk-no-key-required" if params.get("api_base") else None)
        if key:
            kwargs["api_key"] = key
    return kwargs


# ---------------------------------------------------------------- response <-> Output <-> cache value
def _output_from_response(litellm: Any, model: str, response: Any, latency_ms: float) -> Output:
    """`litellm` None: `response` is the JSON of a direct call (http_.DirectOpenAI), unpriced."""
    raw = response if litellm is None else _plain_json(response)  # plain JSON types only (cached, reported)
    if not isinstance(raw, dict):
        raise ProviderError(f"{model}: the reply is not a chat completion (a JSON {type(raw).__name__})")
    choices = raw.get("choices")
    if not choices or not isinstance(choices[0], dict):
        raise ProviderError(f"{model}: the reply has no choices (an empty chat completion)")
    choice = choices[0]
    message = choice.get("message") or {}
    text = message.get("content")
    if text is None and message.get("tool_calls"):
        text = json.dumps(message["tool_calls"])
    elif text is None:  # `content: null` and no tool call: not an output that could pass `not-contains`
        raise ProviderError(f"{model}: empty reply (the message's content is null)", retryable=False)
    elif not isinstance(text, str):  # content parts from some servers
        text = "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in text) \
            if isinstance(text, list) else json.dumps(text)
    usage = raw.get("usage") or {}
    tokens = TokenUsage(prompt=int(usage.get("prompt_tokens") or 0),
                        completion=int(usage.get("completion_tokens") or 0),
                        total=int(usage.get("total_tokens") or 0))
    # the cost litellm computed in its success path (None when it knows no price, e.g. local servers)
    cost = None if litellm is None else (getattr(response, "_hidden_params", None) or {}).get("response_cost")
    return Output(text=text or "", raw=raw, tokens=tokens, cost=float(cost) if isinstance(cost, (int, float)) else None,
                  latency_ms=latency_ms, finish_reason=choice.get("finish_reason"))


def _plain_json(response: Any) -> Any:
    if hasattr(response, "model_dump"):
        try:
            return response.model_dump(mode="json")
        except Exception:  # a field pydantic cannot serialise: str() it like the fallback below
            return json.loads(json.dumps(response.model_dump(), default=str))
    return json.loads(json.dumps(dict(response), default=str))


def _value_from_output(out: Output) -> dict[str, Any]:
    t = out.tokens
    return {"text": out.text, "raw": out.raw, "tokens": [t.prompt, t.completion, t.total], "cost": out.cost,
            "latency_ms": out.latency_ms, "finish_reason": out.finish_reason}


def _output_from_value(value: dict[str, Any]) -> Output:
    p, c, t = (list(value.get("tokens") or []) + [0, 0, 0])[:3]
    return Output(text=str(value.get("text") or ""), raw=value.get("raw"),
                  tokens=TokenUsage(int(p), int(c), int(t)), cost=value.get("cost"),
                  latency_ms=float(value.get("latency_ms") or 0.0), finish_reason=value.get("finish_reason"))


def _as_cached(out: Output) -> Output:
    """The same answer served without a request: cached=True, no cost, tokens counted as cached."""
    tokens = dataclasses.replace(out.tokens, cached=out.tokens.total)
    return dataclasses.replace(out, cached=True, cost=0.0 if out.cost is not None else None, tokens=tokens)


# ---------------------------------------------------------------- provider
class LiteLLMProvider:
    """A promptfoo-style or litellm-style provider id served through an LLMTransport."""

    def __init__(self, spec: ProviderSpec, transport: LLMTransport) -> None:
        self.spec = spec
        self.id = spec.id
        self.label = spec.label or spec.id
        self.transport = transport
        self.model = ids.to_litellm_model(spec.id, loc=spec.loc, key="providers")
        env = {**os.environ, **spec.env} if spec.env else None  # promptfoo's per-provider `env` comes first
        params = ids.default_params(spec.id, env)
        params.update(ids.env_params(spec.id, spec.env))
        params.update(ids.normalise_params(spec.config, env=env, loc=spec.loc, key=f"providers[{spec.id}].config"))
        self.params = params

    def missing_key(self) -> list[str]:
        """The API-key variables this model reads when none is set (ids.missing_key): checked before the run."""
        return ids.missing_key(self.model, self.params, {**os.environ, **self.spec.env})

    async def call(self, prompt: str | Messages, ctx: CallContext) -> Output:
        messages = list(prompt) if isinstance(prompt, list) else [{"role": "user", "content": prompt}]
        params = self.params
        if ctx.prompt_config:  # a prompt's `config` overrides the provider's for this call (promptfoo)
            params = {**params, **ids.normalise_params(ctx.prompt_config, loc=self.spec.loc, key="prompt config")}
        out = await self.transport.chat(self.model, messages, params, use_cache=ctx.use_cache)
        if parses_json(self.model, params):  # promptfoo hands on the parsed object (a reply that is JSON)
            with contextlib.suppress(ValueError):
                return dataclasses.replace(out, value=json.loads(out.text))
        return out


def parses_json(model: str, params: Mapping[str, Any]) -> bool:
    """Whether promptfoo hands transforms and code assertions the reply parsed: `response_format: {type:
    json_schema}`, `{type: json_object}` on Azure, Anthropic's `output_format: {type: json_schema}`."""
    kind, anthropic = (v.get("type") if isinstance(v, Mapping) else None
                       for v in (params.get("response_format"), params.get("output_format")))
    return "json_schema" in (kind, anthropic) or (kind == "json_object" and model.startswith(("azure/", "azure_text/")))


@functools.lru_cache(maxsize=1)
def _has_mcp_path() -> bool:
    """Whether this litellm routes `tools` through its MCP handler (and so understands `_skip_mcp_handler`)."""
    import importlib.util

    try:
        return importlib.util.find_spec("litellm.responses.mcp.chat_completions_handler") is not None
    except (ImportError, ValueError):
        return False


async def moderate(model: str, text: str, params: dict[str, Any]) -> dict[str, Any]:
    """One moderation request (litellm's amoderation: OpenAI's moderation endpoint, or a compatible server at
    `api_base`); the reply as plain JSON ({results: [{flagged, categories, category_scores}]}). Raises
    ProviderError."""
    litellm = await _litellm_module()
    kwargs = {k: v for k, v in _call_kwargs("openai/" + model, params).items()
              if k in ("api_key", "api_base", "timeout", "organization")}
    try:
        response = await litellm.amoderation(input=text, model=model, **kwargs)
    except Exception as exc:  # noqa: BLE001 - every failure is this call's ProviderError
        raise to_provider_error(exc, model, params) from exc
    reply = _plain_json(response)
    if not isinstance(reply, dict):
        raise ProviderError(f"{model}: the moderation reply is not a JSON object")
    return reply
