"""HTTP through aiohttp (httpx cost 2.4-4.4 ms of CPU a request against 0.45-0.7), one session per event loop:
promptfoo's HTTP provider (docs/running.md) and `DirectOpenAI`, the lean transport for OpenAI-compatible servers."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import os
import re
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from evalrun import templating
from evalrun.errors import AssertionRuntimeError, ConfigError, ProviderError, did_you_mean
from evalrun.providers.base import CallContext, as_text
from evalrun.retry import (
    RetryPolicy,
    call_with_retries,
    describe_retry,
    is_retryable_status,
    parse_retry_after,
)
from evalrun.types import Messages, Output, ProviderSpec

_PATH_TOKEN = re.compile(r"\.?([A-Za-z_$][\w$-]*)|\[(\d+)\]|\[[\"']([^\"']+)[\"']\]")
_ALLOWED = frozenset({"url", "method", "headers", "body", "queryParams", "responsePath", "transformResponse",
                      "contextPath", "timeoutMs", "maxRetries"})


@functools.lru_cache(maxsize=64)
def proxy_for(url: str) -> str | None:
    """The proxy for `url` from HTTP(S)_PROXY / NO_PROXY (None: direct), once per URL (not per request)."""
    import urllib.parse
    import urllib.request

    parts = urllib.parse.urlsplit(url)
    if parts.hostname and urllib.request.proxy_bypass(parts.hostname):
        return None
    return urllib.request.getproxies().get(parts.scheme)


async def _close_with_loop(session: Any) -> AsyncIterator[None]:
    """Closes the session with its event loop (asyncio.run's shutdown_asyncgens) when nobody calls aclose()."""
    try:
        yield
    finally:
        if not session.closed:
            await session.close()


class LoopSession:
    """An aiohttp.ClientSession for the running event loop, made again for another loop (`limit` 0: no cap)."""

    def __init__(self, *, limit: int = 100) -> None:
        self.limit = limit
        self._session: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closer: Any = None

    async def get(self) -> Any:
        loop = asyncio.get_running_loop()
        if self._session is None or self._loop is not loop or self._session.closed:
            import aiohttp

            self._session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=self.limit),
                                                  trust_env=False)
            self._loop = loop
            self._closer = _close_with_loop(self._session)
            await self._closer.asend(None)
        return self._session

    async def aclose(self) -> None:
        if self._session is not None and not self._session.closed and self._loop is asyncio.get_running_loop():
            await self._session.close()
        self._session = None


def parse_path(path: str) -> list[str | int]:
    """'json.choices[0].message.content' -> ['choices', 0, 'message', 'content'] (a leading `json` dropped)."""
    parts: list[str | int] = []
    pos = 0
    path = path.strip()
    while pos < len(path):
        m = _PATH_TOKEN.match(path, pos)
        if not m or m.end() == pos:
            raise ValueError(f"cannot parse response path {path!r} at {path[pos:]!r}")
        parts.append(int(m.group(2)) if m.group(2) else (m.group(1) or m.group(3)))
        pos = m.end()
    if parts and parts[0] in ("json", "data"):
        parts = parts[1:]
    return parts


def follow(data: Any, parts: list[str | int]) -> Any:
    cur = data
    for p in parts:
        try:
            cur = cur[p]
        except (KeyError, IndexError, TypeError):
            raise ProviderError(f"http: response has no {p!r} at this path (got {as_text(cur)[:200]})") from None
    return cur


def _is_path(expr: str) -> bool:
    """`json.a.b[0]` (a path evalrun follows itself) rather than JavaScript (`JSON.stringify(json)`)."""
    with contextlib.suppress(ValueError):
        parse_path(expr)
        return expr.strip().startswith(("json", "data"))
    return False


def _js_transform(expr: str, spec: ProviderSpec) -> str:
    """promptfoo's transformResponse as JavaScript (over `json`, `text`, `context`), checked now."""
    from evalrun.jsnode import check_syntax, node_path

    if node_path() is None:
        raise ConfigError.at(spec.loc, "transformResponse is JavaScript and needs Node.js, which was not found on "
                             "PATH", key="config.transformResponse",
                             hint="install Node.js, or write a path such as json.choices[0].message.content")
    if not expr.startswith("file://"):
        problem = check_syntax(expr)
        if problem:
            raise ConfigError.at(spec.loc, f"transformResponse does not compile as JavaScript: {problem}",
                                 key="config.transformResponse")
    return expr


class HttpProvider:
    def __init__(self, spec: ProviderSpec, on_event: Callable[[str], None] | None = None,
                 base_dir: str = ".") -> None:
        self.id = spec.id
        self.label = spec.name
        cfg = dict(spec.config)
        for k in cfg:
            if k not in _ALLOWED:
                raise ConfigError.at(spec.loc, f"unknown http provider config key {k!r}", key=f"config.{k}",
                                     hint=did_you_mean(k, _ALLOWED) or f"allowed: {', '.join(sorted(_ALLOWED))}")
        if not cfg.get("url") and "://" not in spec.id:
            raise ConfigError.at(spec.loc, f"provider {spec.id!r} needs `config.url`", key="config.url",
                                 hint="promptfoo's `http`/`https` providers take the endpoint from config.url")
        self.url = str(cfg.get("url") or spec.id)
        self.method = str(cfg.get("method", "POST")).upper()
        self.headers = dict(cfg.get("headers") or {})
        self.body = cfg.get("body", {"prompt": "{{ prompt }}"})
        self.query = dict(cfg.get("queryParams") or {})
        self.timeout = float(cfg.get("timeoutMs", 60000)) / 1000.0
        policy = RetryPolicy.from_env()
        self.policy = RetryPolicy(attempts=int(cfg["maxRetries"]) + 1) if "maxRetries" in cfg else policy
        self.on_event = on_event
        self.transform_js: str | None = None  # transformResponse as JavaScript over json, text, context
        self.base_dir = base_dir
        try:
            path = cfg.get("responsePath") or cfg.get("transformResponse")
            if path and cfg.get("transformResponse") and not _is_path(str(path)):  # JavaScript
                self.transform_js = _js_transform(str(path), spec)
                path = None
            self.response_path = parse_path(str(path)) if path else []
            ctx_path = cfg.get("contextPath")
            self.context_path = parse_path(str(ctx_path)) if ctx_path else None
        except ValueError as e:
            raise ConfigError.at(spec.loc, str(e), key="config.responsePath",
                                 hint="write a path like json.choices[0].message.content") from None
        self._sessions = LoopSession()

    async def call(self, prompt: str | Messages, ctx: CallContext) -> Output:
        import aiohttp

        variables = {**ctx.vars, "prompt": prompt}
        try:
            url = templating.render(self.url, variables)
            headers = {k: str(templating.render_value(v, variables)) for k, v in self.headers.items()}
            query = {k: str(templating.render_value(v, variables)) for k, v in self.query.items()}
            body = templating.render_value(self.body, variables)
        except Exception as e:  # jinja errors
            raise ProviderError(f"http: cannot render the request: {e}") from None
        has_type = any(k.lower() == "content-type" for k in headers)
        kwargs: dict[str, Any] = {"headers": headers, "params": query or None, "allow_redirects": False,
                                  "timeout": aiohttp.ClientTimeout(total=self.timeout), "proxy": proxy_for(url)}
        if self.method != "GET":
            if isinstance(body, (dict, list)):
                kwargs["data"] = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
                if not has_type:
                    headers["Content-Type"] = "application/json"
            else:
                kwargs["data"] = str(body).encode()
            if not has_type:
                kwargs["skip_auto_headers"] = ("Content-Type",)  # a text body goes without one, as it is given

        async def attempt() -> str:
            try:
                session = await self._sessions.get()
                async with session.request(self.method, url, **kwargs) as resp:
                    status, raw = resp.status, await resp.read()
                    retry_after = resp.headers.get("Retry-After")
                    charset = resp.charset or "utf-8"
            except aiohttp.InvalidURL as e:
                raise ProviderError(f"http: invalid URL {e}") from None
            except (asyncio.TimeoutError, aiohttp.ClientError) as e:
                raise ProviderError(f"http: {type(e).__name__}: {e}", retryable=True) from None
            try:
                text = raw.decode(charset, errors="replace")
            except LookupError:  # a charset Python does not know
                text = raw.decode("utf-8", errors="replace")
            if is_retryable_status(status):
                raise ProviderError(f"http {status}", retryable=True, status=status,
                                    retry_after=parse_retry_after(retry_after))
            if status >= 400:
                raise ProviderError(f"http {status}: {text[:300]}", status=status)
            return text

        def on_retry(n: int, total: int, err: ProviderError, wait: float) -> None:
            if self.on_event:
                self.on_event(describe_retry(n, total, err, wait) + f" [{self.label}]")

        start = time.perf_counter()
        text = await call_with_retries(attempt, self.policy, on_retry)
        latency = (time.perf_counter() - start) * 1000.0
        try:
            data: Any = json.loads(text)
        except ValueError:
            if self.response_path:
                raise ProviderError(f"http: reply is not JSON: {text[:200]!r}") from None
            return Output(text=text, raw=text, latency_ms=latency)
        meta: dict[str, Any] = {}
        if self.context_path is not None:
            meta["context"] = follow(data, self.context_path)
        if self.transform_js is not None:
            from evalrun.jsnode import call_js_args

            try:
                value = await call_js_args(self.transform_js, [data, text, {"vars": ctx.vars}],
                                           base_dir=self.base_dir, what="transformResponse",
                                           params=["json", "text", "context"])
            except AssertionRuntimeError as e:
                raise ProviderError(f"http: {e}") from None
        else:
            value = follow(data, self.response_path)
        return Output(text=as_text(value), raw=data, latency_ms=latency, metadata=meta,
                      value=None if isinstance(value, str) or value is None else value)

    async def aclose(self) -> None:
        await self._sessions.aclose()


# ------------------------------------------------------------------ the direct OpenAI-compatible transport
#: Request-body parameters litellm forwards unchanged to an OpenAI-compatible chat completions endpoint.
BODY_PARAMS = frozenset({
    "temperature", "max_tokens", "max_completion_tokens", "top_p", "stop", "seed", "n", "presence_penalty",
    "frequency_penalty", "logit_bias", "user", "response_format", "logprobs", "top_logprobs",
})  # tools / tool_choice stay with litellm, which may transform them (MCP tools, per-model support)
#: Parameters that shape the HTTP call rather than the body.
CALL_PARAMS = frozenset({"api_base", "api_key", "timeout", "num_retries", "max_retries", "extra_headers",
                         "organization"})


class DirectError(Exception):
    """A failed call, worded as litellm words it; `status_code` and `headers` for a non-2xx reply."""

    def __init__(self, message: str, status: int | None = None, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.message, self.status_code, self.headers = message, status, headers


@functools.cache
def priced_models() -> frozenset[str]:
    """Model names in litellm's bundled price map, read without importing litellm (~30 ms, once)."""
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
    """The body litellm would send to an OpenAI-compatible server, in one aiohttp POST (~0.4 ms of CPU a call
    against litellm's 8-10); `EVALRUN_LLM_TRANSPORT=litellm` turns it off."""

    def __init__(self) -> None:
        self._sessions = LoopSession(limit=0)  # no limit of its own: the transport's semaphore bounds requests

    @staticmethod
    def accepts(model: str, kwargs: dict[str, Any]) -> bool:
        """Chat completions at an `api_base`, parameters litellm forwards as they are, a model litellm cannot price."""
        if not model.startswith("openai/") or model.startswith("openai/responses/") or not kwargs.get("api_base") \
                or os.environ.get("EVALRUN_LLM_TRANSPORT", "").strip().lower() == "litellm" \
                or not all(k in BODY_PARAMS or k in CALL_PARAMS for k in kwargs):
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


_WEBHOOKS = LoopSession(limit=0)


async def post_json(url: str, body: Any, timeout_s: float, headers: dict[str, str] | None = None) -> tuple[int, Any]:
    """POST `body` as JSON to `url` (no proxy, as for a webhook: the user's own server); (status, the reply's JSON
    or None when it is not JSON). Network failures raise ProviderError with the cause."""
    import aiohttp
    session = await _WEBHOOKS.get()
    try:
        async with session.post(url, json=body, headers=headers,
                                timeout=aiohttp.ClientTimeout(total=timeout_s)) as resp:
            text = await resp.text()
    except asyncio.TimeoutError:
        raise ProviderError(f"{url}: no reply within {timeout_s:g}s") from None
    except (aiohttp.ClientError, ValueError) as e:
        raise ProviderError(f"{url}: {type(e).__name__}: {e}") from None
    try:
        return resp.status, json.loads(text)
    except ValueError:
        return resp.status, None
