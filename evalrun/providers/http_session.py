"""aiohttp, evalrun's one HTTP client (declared): one session per event loop, proxies from the environment.
Not httpx: 2.4-4.4 ms of CPU per request against aiohttp's 0.45-0.7 (benchmarks/README.md).
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import AsyncIterator
from typing import Any


@functools.lru_cache(maxsize=64)
def proxy_for(url: str) -> str | None:
    """The proxy for `url` from the environment (HTTP_PROXY / HTTPS_PROXY / NO_PROXY), None for a direct line.

    Sessions are made with trust_env=False (aiohttp would then look the proxy up in a thread on every
    request): this looks it up once per URL, the way urllib does."""
    import urllib.parse
    import urllib.request

    parts = urllib.parse.urlsplit(url)
    if parts.hostname and urllib.request.proxy_bypass(parts.hostname):
        return None
    return urllib.request.getproxies().get(parts.scheme)


async def _close_with_loop(session: Any) -> AsyncIterator[None]:
    """Started once per session: asyncio.run's shutdown_asyncgens closes it, so the session is closed with its
    event loop even when nobody calls aclose() (a transport used by a bare asyncio.run)."""
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
