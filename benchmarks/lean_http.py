"""A minimal keep-alive HTTP/1.1 client for load generation: one connection, one request at a time.

A load generator must cost far less CPU than the server it measures. An httpx
``AsyncClient`` spends 1-2 ms of CPU per request on a slow core; this one
spends about a tenth of that: an ``asyncio.Protocol`` with no streams, requests
written as prebuilt bytes, and responses parsed by ``httptools`` (llhttp, the
parser uvicorn uses, already a core dependency).
"""

from __future__ import annotations

import asyncio
from typing import Any

import httptools
import orjson


class HTTPStatusError(Exception):
    """The server answered with an unexpected status."""


class LeanConnection(asyncio.Protocol):
    """One keep-alive connection to ``host:port``; ``request`` may not be called concurrently."""

    def __init__(self, host: str, port: int, headers: dict[str, str] | None = None) -> None:
        self.host = host
        self.port = port
        extra = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
        self._head_suffix = f"Host: {host}:{port}\r\n{extra}".encode()
        self._transport: asyncio.Transport | None = None
        self._parser = httptools.HttpResponseParser(self)
        self._body: list[bytes] = []
        self._waiter: asyncio.Future[tuple[int, bytes]] | None = None

    async def connect(self) -> LeanConnection:
        loop = asyncio.get_running_loop()
        await loop.create_connection(lambda: self, self.host, self.port)
        return self

    # -- asyncio.Protocol ----------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = transport  # type: ignore[assignment]  # uvloop's TCPTransport is not a subclass

    def data_received(self, data: bytes) -> None:
        self._parser.feed_data(data)

    def connection_lost(self, exc: Exception | None) -> None:
        self._transport = None
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_exception(ConnectionError(f"the server at {self.host}:{self.port} closed the connection"))

    # -- httptools callbacks -------------------------------------------------------

    def on_body(self, body: bytes) -> None:
        self._body.append(body)

    def on_message_complete(self) -> None:
        body = b"".join(self._body)
        self._body.clear()
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result((self._parser.get_status_code(), body))

    # -- requests --------------------------------------------------------------------

    async def request(self, method: str, path: str, body: bytes | None = None) -> tuple[int, bytes]:
        """Send one request and wait for its whole response: ``(status, body)``."""
        if self._transport is None:  # never connected, or the server closed an idle keep-alive connection
            self._parser = httptools.HttpResponseParser(self)
            await self.connect()
        assert self._transport is not None
        head = f"{method} {path} HTTP/1.1\r\n".encode() + self._head_suffix
        if body is not None:
            head += b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body)
            self._transport.write(head + body)
        else:
            self._transport.write(head + b"\r\n")
        self._waiter = asyncio.get_running_loop().create_future()
        return await self._waiter

    async def json(self, method: str, path: str, payload: Any = None, expect: int = 200) -> Any:
        """A JSON request whose answer must have status ``expect``; returns the decoded body (None if empty)."""
        status, body = await self.request(method, path, None if payload is None else orjson.dumps(payload))
        if status != expect:
            raise HTTPStatusError(f"{method} {path} answered {status}, expected {expect}: {body[:300]!r}")
        return orjson.loads(body) if body else None

    def close(self) -> None:
        if self._transport is not None:
            self._transport.close()
