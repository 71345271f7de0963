"""A local webhook grader on 127.0.0.1 (aiohttp, in a thread) for webhook assertion tests: POST /grade answers
with `reply(body)`; every request body is kept in `.requests`."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

from aiohttp import web


class WebhookServer:
    def __init__(self, reply: Callable[[dict[str, Any]], tuple[int, Any]]) -> None:
        self.reply = reply
        self.requests: list[dict[str, Any]] = []
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self.port = 0

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)

        async def grade(request: web.Request) -> web.Response:
            body = await request.json()
            self.requests.append(body)
            status, payload = self.reply(body)
            if isinstance(payload, str):
                return web.Response(status=status, text=payload)
            return web.json_response(payload, status=status)

        async def start() -> web.AppRunner:
            app = web.Application()
            app.router.add_post("/grade", grade)
            runner = web.AppRunner(app)
            await runner.setup()
            site = web.TCPSite(runner, "127.0.0.1", 0)
            await site.start()
            self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
            return runner

        self._runner = self._loop.run_until_complete(start())
        self._ready.set()
        self._loop.run_forever()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/grade"

    def __enter__(self) -> WebhookServer:
        self._thread.start()
        self._ready.wait(10)
        return self

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
