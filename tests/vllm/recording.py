"""A recording proxy in front of vLLM: what the engine really answered, independent of the agent's code.

The agent under test talks to the proxy; the proxy forwards each request to
vLLM unchanged, returns vLLM's bytes unchanged, and keeps both. A test then
compares the run's stored trajectories with these answers.
"""

from __future__ import annotations

import asyncio
import json
import threading
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from aiohttp import web


@dataclass
class Exchange:
    path: str
    request: dict[str, Any]
    answer: dict[str, Any]


@dataclass
class RecordingProxy:
    upstream: str
    """vLLM's root URL (no ``/v1``)."""
    exchanges: list[Exchange] = field(default_factory=list)
    port: int = 0
    _loop: asyncio.AbstractEventLoop | None = None
    _thread: threading.Thread | None = None
    _runner: web.AppRunner | None = None
    _session: aiohttp.ClientSession | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def chat_answers(self) -> list[Exchange]:
        return [e for e in self.exchanges if e.path.endswith("/chat/completions")]

    async def _forward(self, request: web.Request) -> web.Response:
        assert self._session is not None
        body = await request.read()
        async with self._session.request(
            request.method,
            f"{self.upstream}{request.path_qs}",
            data=body or None,
            headers={"Content-Type": request.headers.get("Content-Type", "application/json")},
        ) as upstream:
            raw = await upstream.read()
            status, content_type = upstream.status, upstream.headers.get("Content-Type", "application/json")
        if request.method == "POST" and status == 200:
            self.exchanges.append(Exchange(request.path, json.loads(body), json.loads(raw)))
        return web.Response(body=raw, status=status, headers={"Content-Type": content_type})

    async def _start(self, ready: threading.Event) -> None:
        self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=600))
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_route("*", "/{tail:.*}", self._forward)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        server = site._server
        assert server is not None
        self.port = server.sockets[0].getsockname()[1]  # type: ignore[attr-defined]
        ready.set()

    async def _stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
        if self._session is not None:
            await self._session.close()

    def __enter__(self) -> RecordingProxy:
        self._loop = asyncio.new_event_loop()
        ready = threading.Event()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True, name="vllm-recording-proxy")
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._start(ready), self._loop).result(30)
        ready.wait(30)
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._loop is not None and self._thread is not None
        asyncio.run_coroutine_threadsafe(self._stop(), self._loop).result(30)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(30)
        self._loop.close()
