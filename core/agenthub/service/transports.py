"""The two ways :class:`~agenthub.service.async_client.EnvClient` sends a request: aiohttp, or an httpx transport.

aiohttp is the default, chosen by benchmark (``benchmarks/env_client_transports.py``): on 2 slow cores it
spends about 0.2-0.3 ms of client CPU per request where an httpx ``AsyncClient`` spends 2-5 ms (its
connection pool grows costlier with the number of connections), and the executor makes one env request
per turn. httpx stays for in-process use: ``EnvClient(url, transport=httpx.ASGITransport(app))`` serves an
app without a socket (tests, notebooks).

Both answer with an :class:`Answer`, or raise :class:`TransportFailure` saying whether the request may have
reached the server, which is what the client's retries need to know.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import aiohttp
import httpx
import orjson

# Below uvicorn's 5 s keep-alive: the client drops an idle connection before the server
# may close it, so a request is never written into a connection the server is closing.
_KEEPALIVE_S = 4.0
_JSON = {"Content-Type": "application/json"}


@dataclass(frozen=True, slots=True)
class Answer:
    """A complete HTTP answer, whichever transport fetched it."""

    status: int
    reason: str
    headers: Mapping[str, str]  # case-insensitive (aiohttp's CIMultiDictProxy, httpx's Headers)
    content: bytes
    url: str

    def json(self) -> Any:
        return orjson.loads(self.content)

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", errors="replace")


class TransportFailure(Exception):
    """No answer came back; ``sent`` says whether the server may have received the request."""

    def __init__(self, cause: BaseException, *, sent: bool) -> None:
        super().__init__(f"{type(cause).__name__}: {cause}" if str(cause) else type(cause).__name__)
        self.sent = sent


class AiohttpTransport:
    """Pooled keep-alive connections; the session belongs to the event loop that first uses it."""

    def __init__(
        self, headers: Mapping[str, str], timeout: float, connect_timeout: float, max_connections: int
    ) -> None:
        self.headers = dict(headers)
        # connect: waiting for a pooled connection plus connecting; sock_read: the answer.
        self.timeout = aiohttp.ClientTimeout(
            total=None, connect=timeout, sock_connect=connect_timeout, sock_read=timeout
        )
        self.max_connections = max_connections
        self._session: aiohttp.ClientSession | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    async def _current(self) -> aiohttp.ClientSession:
        loop = asyncio.get_running_loop()
        if self._session is None or self._loop is not loop:
            old, old_loop = self._session, self._loop
            if old is not None and old_loop is not None and old_loop.is_closed():
                await old.close()  # its loop is gone with its sockets; this only marks it closed
            connector = aiohttp.TCPConnector(
                limit=self.max_connections, limit_per_host=0, keepalive_timeout=_KEEPALIVE_S, ttl_dns_cache=300
            )
            self._session = aiohttp.ClientSession(
                headers=self.headers,
                timeout=self.timeout,
                connector=connector,
                skip_auto_headers=("User-Agent",),
                auto_decompress=False,
            )
            self._loop = loop
        return self._session

    async def send(self, method: str, url: str, body: bytes | None, params: Mapping[str, str] | None) -> Answer:
        session = self._session if self._loop is asyncio.get_running_loop() else None
        if session is None:
            session = await self._current()
        try:
            async with session.request(
                method, url, data=body, params=params, headers=_JSON if body is not None else None
            ) as response:
                content = await response.read()
                return Answer(response.status, response.reason or "", response.headers, content, url)
        except (aiohttp.ClientConnectorError, aiohttp.ConnectionTimeoutError) as exc:
            raise TransportFailure(exc, sent=False) from exc
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise TransportFailure(exc, sent=True) from exc

    async def aclose(self) -> None:
        session, loop = self._session, self._loop
        self._session, self._loop = None, None
        if session is None or loop is None:
            return
        if loop is asyncio.get_running_loop() or loop.is_closed():
            await session.close()
        elif loop.is_running():  # still serving another thread: close it there
            asyncio.run_coroutine_threadsafe(session.close(), loop)


class HttpxTransport:
    """An httpx transport given by the caller, such as ``httpx.ASGITransport(app)`` for an in-process app."""

    def __init__(
        self, transport: httpx.AsyncBaseTransport, headers: Mapping[str, str], timeout: float, connect_timeout: float
    ) -> None:
        self._http = httpx.AsyncClient(
            headers=dict(headers), timeout=httpx.Timeout(timeout, connect=connect_timeout), transport=transport
        )

    async def send(self, method: str, url: str, body: bytes | None, params: Mapping[str, str] | None) -> Answer:
        try:
            response = await self._http.request(
                method, url, content=body, params=params, headers=_JSON if body is not None else None
            )
        except httpx.ConnectError as exc:
            raise TransportFailure(exc, sent=False) from exc
        except (httpx.TransportError, httpx.TimeoutException) as exc:
            raise TransportFailure(exc, sent=True) from exc
        return Answer(response.status_code, response.reason_phrase, response.headers, response.content, url)

    async def aclose(self) -> None:
        await self._http.aclose()


class Transport(Protocol):
    """What the client needs of a transport: send one request, and close."""

    async def send(self, method: str, url: str, body: bytes | None, params: Mapping[str, str] | None) -> Answer: ...

    async def aclose(self) -> None: ...
