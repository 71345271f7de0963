"""`http(s)://URL` (or `http` / `https` / `https:NAME` with `config.url`): an HTTP endpoint called per case.

Its `config:` keys are promptfoo's (docs/running.md). Also evalrun's one HTTP client: aiohttp (not httpx: 2.4-4.4
ms of CPU per request against 0.45-0.7, benchmarks/README.md), one session per event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import re
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from evalrun import templating
from evalrun.errors import AssertionRuntimeError, ConfigError, ProviderError
from evalrun.providers.base import CallContext, as_text
from evalrun.retry import (
    RetryPolicy,
    call_with_retries,
    describe_retry,
    is_retryable_status,
    parse_retry_after,
)
from evalrun.suggest import did_you_mean
from evalrun.types import Messages, Output, ProviderSpec

_PATH_TOKEN = re.compile(r"\.?([A-Za-z_$][\w$-]*)|\[(\d+)\]|\[[\"']([^\"']+)[\"']\]")
_ALLOWED = frozenset({"url", "method", "headers", "body", "queryParams", "responsePath", "transformResponse",
                      "contextPath", "timeoutMs", "maxRetries"})


@functools.lru_cache(maxsize=64)
def proxy_for(url: str) -> str | None:
    """The proxy for `url` from HTTP(S)_PROXY / NO_PROXY (None: direct), once per URL as urllib does; sessions use
    trust_env=False, with which aiohttp would look it up in a thread on every request."""
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
    """An aiohttp.ClientSession for the running event loop (connections kept alive), made on first use and
    made again when a later call runs in another loop. `limit` caps the connections (0: none)."""

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
    """promptfoo's transformResponse as JavaScript: an expression over `json`, `text`, `context`, a function
    body, or file://x.js[:fn]; checked now (Node.js needed, the code must compile)."""
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

        async def attempt() -> tuple[int, str]:
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
            return status, text

        def on_retry(n: int, total: int, err: ProviderError, wait: float) -> None:
            if self.on_event:
                self.on_event(describe_retry(n, total, err, wait) + f" [{self.label}]")

        start = time.perf_counter()
        _, text = await call_with_retries(attempt, self.policy, on_retry)
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
