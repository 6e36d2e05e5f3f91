"""Pure ASGI middleware: request body limit and bearer-token check.

Written as raw ASGI rather than ``BaseHTTPMiddleware`` because they sit on
every request and the latter costs a task and a queue per call.
"""

from __future__ import annotations

import hmac
from collections.abc import Callable
from typing import Any

import orjson
from starlette.types import ASGIApp, Message, Receive, Scope, Send

CountError = Callable[[str], None]
"""Counts an error answer by its code in the server's metrics."""


def error_body(code: str, message: str) -> bytes:
    """The one JSON error body of every refusal: ``{"error": {"code", "message"}}``."""
    return orjson.dumps({"error": {"code": code, "message": message}})


async def send_error(
    send: Send,
    status: int,
    code: str,
    message: str,
    headers: dict[str, str] | None = None,
    *,
    count: CountError | None = None,
) -> None:
    if count is not None:
        count(code)
    body = error_body(code, message)
    raw_headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    raw_headers += [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": raw_headers})
    await send({"type": "http.response.body", "body": body})


class BodyLimitMiddleware:
    """Refuse request bodies over ``max_bytes`` with 413, by Content-Length or, for a chunked body, as it arrives.

    A body without Content-Length is read here, up to the limit, and replayed to the app: refused
    inside the app, FastAPI's body parser would turn the refusal into a 400.
    """

    def __init__(self, app: ASGIApp, max_bytes: int, count: CountError | None = None) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.count = count

    def _message(self) -> str:
        return (
            f"request body is larger than this server's limit of {self.max_bytes} bytes; "
            "send a shorter action or start the server with a larger max_body_bytes"
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        lengths = [value for name, value in scope["headers"] if name == b"content-length"]
        if lengths:
            # The HTTP parser refuses most bad values before this; this covers servers whose parser does not.
            if len(lengths) > 1 or not lengths[0].strip().isdigit():
                shown = b", ".join(lengths).decode("latin-1")
                await send_error(
                    send,
                    400,
                    "bad_content_length",
                    f"Content-Length {shown!r} is not one non-negative integer; send the body's size in bytes",
                    count=self.count,
                )
                return
            if int(lengths[0]) > self.max_bytes:
                await send_error(send, 413, "body_too_large", self._message(), count=self.count)
                return
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        seen = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away
            chunk = message.get("body", b"")
            seen += len(chunk)
            if seen > self.max_bytes:
                await send_error(send, 413, "body_too_large", self._message(), count=self.count)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        await self.app(scope, replay_body(b"".join(chunks), receive), send)


def replay_body(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that gives the already-read body once, then defers to the real one."""
    given = False

    async def replayed() -> Message:
        nonlocal given
        if given:
            return await receive()
        given = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replayed


class BearerTokenMiddleware:
    """Require ``Authorization: Bearer <token>`` on every route except those in ``open_paths``."""

    def __init__(
        self,
        app: ASGIApp,
        token: str,
        open_paths: frozenset[str] = frozenset({"/healthz"}),
        count: CountError | None = None,
    ) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()
        self.open_paths = open_paths
        self.count = count

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in self.open_paths:
            await self.app(scope, receive, send)
        elif await refused_token(scope, send, self.expected, self.count):
            return
        else:
            await self.app(scope, receive, send)


async def refused_token(scope: Scope, send: Send, expected: bytes, count: CountError | None = None) -> bool:
    """Answer 401 and return True unless the request carries ``expected`` as its Authorization header."""
    given: Any = next((v for k, v in scope["headers"] if k == b"authorization"), b"")
    if hmac.compare_digest(given, expected):
        return False
    reason = "is missing" if not given else "does not match"
    await send_error(
        send,
        401,
        "unauthorized",
        f"the Authorization header {reason}; send 'Authorization: Bearer <token>' with the server's token",
        {"WWW-Authenticate": "Bearer"},
        count=count,
    )
    return True
