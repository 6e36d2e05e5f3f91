"""uvicorn's httptools protocol, sending each response in one write instead of two.

uvicorn writes a response's head on ``http.response.start`` and its body on
``http.response.body``; with TCP_NODELAY each becomes its own syscall and its
own TCP segment, and on loopback the kernel delivers each one to the client
inside the sending syscall. Profiled under load, the head's write alone took a
quarter of the server's CPU. Writes made in one turn of the event loop are
joined here and sent once at the end of that turn: one syscall, one segment,
one wake-up of the reader, and no added latency (no Nagle delay).

``HttpToolsProtocol`` is private to uvicorn, so the range of uvicorn this was tested with is pinned
in pyproject.toml, and :func:`private_api_problems` lists what it relies on: where a uvicorn
lacks any of it, :mod:`agenthub.service.http_protocol` serves with uvicorn's own protocol instead.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httptools
from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol

from agenthub.service.middleware import error_body

# The private methods and table of uvicorn's HttpToolsProtocol that the subclass below calls.
PRIVATE_METHODS = (
    "connection_made",
    "data_received",
    "_unset_keepalive_if_required",
    "_should_upgrade",
    "handle_websocket_upgrade",
    "_unsupported_upgrade_warning",
)


def private_api_problems(base: type[Any] = HttpToolsProtocol, status_line: Any = STATUS_LINE) -> list[str]:
    """What :class:`CoalescingHttpToolsProtocol` needs of uvicorn and this uvicorn lacks (empty: all there)."""
    problems = [
        f"HttpToolsProtocol.{name} is missing" for name in PRIVATE_METHODS if not callable(getattr(base, name, None))
    ]
    if not isinstance(status_line, dict) or not isinstance(status_line.get(400), bytes):
        problems.append("STATUS_LINE has no status line for 400")
    return problems


class CoalescingTransport:
    """Wraps a transport: ``write`` is buffered until the loop's current turn ends, everything else passes."""

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._pending: list[bytes] = []

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if not self._pending:
            self._loop.call_soon(self._flush)
        self._pending.append(bytes(data))

    def writelines(self, lines: Any) -> None:
        for data in lines:
            self.write(data)

    def _flush(self) -> None:
        if not self._pending:
            return
        data = self._pending[0] if len(self._pending) == 1 else b"".join(self._pending)
        self._pending.clear()
        if not self._transport.is_closing():
            self._transport.write(data)

    def close(self) -> None:
        self._flush()  # what was written before close is still sent, as with a plain transport
        self._transport.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


class CoalescingHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's ``http="httptools"`` protocol on a ``CoalescingTransport``.

    A request the HTTP parser cannot read (a bad Content-Length, a malformed header) is answered
    with the JSON error body of every other refusal, naming what the parser found, where uvicorn
    would send a plain-text "Invalid HTTP request received.".
    """

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(CoalescingTransport(transport, self.loop))  # type: ignore[arg-type]

    def data_received(self, data: bytes) -> None:
        self._unset_keepalive_if_required()
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            if self._should_upgrade():
                self.handle_websocket_upgrade()
            else:
                self._unsupported_upgrade_warning()
        except httptools.HttpParserError as exc:
            self._refuse_unparsable(str(exc) or "malformed request")

    def _refuse_unparsable(self, problem: str) -> None:
        code = "bad_content_length" if "content-length" in problem.lower() else "bad_request"
        message = (
            f"the request is not valid HTTP/1.1 ({problem}); send one request line, well-formed headers "
            "and a Content-Length that is one non-negative integer equal to the body's size in bytes"
        )
        count = getattr(self.app, "count_error", None)  # the EnvApp's metrics, when serving one
        if callable(count):
            count(code)
        body = error_body(code, message)
        head = [STATUS_LINE[400]]
        head += [name + b": " + value + b"\r\n" for name, value in self.server_state.default_headers]
        head += [
            b"content-type: application/json\r\n",
            b"content-length: %d\r\n" % len(body),
            b"connection: close\r\n\r\n",
        ]
        self.transport.write(b"".join(head) + body)
        self.transport.close()
