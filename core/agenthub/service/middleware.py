"""Pure ASGI middleware: request body limit and bearer-token check.

Written as raw ASGI rather than ``BaseHTTPMiddleware`` because they sit on
every request and the latter costs a task and a queue per call.
"""

from __future__ import annotations

import hmac
from typing import Any

import orjson
from starlette.types import ASGIApp, Message, Receive, Scope, Send


async def send_error(send: Send, status: int, code: str, message: str, headers: dict[str, str] | None = None) -> None:
    body = orjson.dumps({"error": {"code": code, "message": message}})
    raw_headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    raw_headers += [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": raw_headers})
    await send({"type": "http.response.body", "body": body})


class _BodyTooLarge(Exception):
    """Raised inside the app when the streamed body passes the limit."""


class BodyLimitMiddleware:
    """Refuse request bodies over ``max_bytes`` with 413, by Content-Length or while streaming."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    def _message(self) -> str:
        return (
            f"request body is larger than this server's limit of {self.max_bytes} bytes; "
            "send a shorter action or start the server with a larger max_body_bytes"
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope["headers"]:
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    await send_error(send, 400, "bad_content_length", "Content-Length is not an integer")
                    return
                if declared > self.max_bytes:
                    await send_error(send, 413, "body_too_large", self._message())
                    return
        seen = 0
        started = False

        async def limited_receive() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    raise _BodyTooLarge
            return message

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, limited_receive, tracking_send)
        except _BodyTooLarge:
            if not started:
                await send_error(send, 413, "body_too_large", self._message())


class BearerTokenMiddleware:
    """Require ``Authorization: Bearer <token>`` on every route except those in ``open_paths``."""

    def __init__(self, app: ASGIApp, token: str, open_paths: frozenset[str] = frozenset({"/healthz"})) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()
        self.open_paths = open_paths

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in self.open_paths:
            await self.app(scope, receive, send)
        elif await refused_token(scope, send, self.expected):
            return
        else:
            await self.app(scope, receive, send)


async def refused_token(scope: Scope, send: Send, expected: bytes) -> bool:
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
    )
    return True
