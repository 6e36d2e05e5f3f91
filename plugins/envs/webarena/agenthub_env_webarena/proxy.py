"""A forward proxy per browser context, on loopback: the network-level half of containment.

Playwright's routing sees a request before Chromium sends it, but not the hops of a redirect, and
WebSockets only through a script it injects; Chromium also opens connections on its own (preconnects).
So each context is given this proxy as its only way out (Playwright's per-context ``proxy``, loopback
included: Playwright adds ``<-loopback>`` to the bypass list): every connection the context opens, of any
kind and for any frame or worker, reaches a host only after :class:`~.containment.SitePolicy` allowed it.

- A plain HTTP request (absolute URL) is checked whole, path included (the built-in shop's sites are
  paths), forwarded with ``Connection: close``, and its answer is sent back with ``Connection: close``,
  so every request comes on a fresh connection and is checked: none can ride on an earlier one.
- ``CONNECT`` (https, and WebSockets through a proxy) is checked by host and port: allowed only to a site
  that is a whole origin (a tunnel's paths cannot be seen).
- A refused connection is closed unanswered: the page sees a network error, the server never a byte.
"""

from __future__ import annotations

import asyncio
import contextlib
import urllib.parse

from agenthub_env_webarena.containment import Refused, SitePolicy, canonical_host

_HOP_BY_HOP = {"connection", "proxy-connection", "keep-alive", "proxy-authorization", "te", "trailer", "upgrade"}
_MAX_HEAD = 64 * 1024


class PolicyProxy:
    """One context's proxy: ``await start()`` gives its URL for ``new_context(proxy={"server": ...})``."""

    def __init__(self, policy: SitePolicy, on_refused: Refused) -> None:
        self.policy = policy
        self.on_refused = on_refused
        self.refused = 0
        """Connections refused so far."""
        self._server: asyncio.Server | None = None
        self._open: set[asyncio.StreamWriter] = set()

    async def start(self) -> str:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0, limit=_MAX_HEAD)
        port = self._server.sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}"

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
        for writer in list(self._open):
            writer.close()
        if self._server is not None:
            with contextlib.suppress(Exception):  # connections already gone
                await asyncio.wait_for(self._server.wait_closed(), 5)
            self._server = None

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._open.add(writer)
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 60)
            lines = head.decode("latin-1").split("\r\n")
            method, target, version = lines[0].split(" ", 2)
            if method.upper() == "CONNECT":
                await self._tunnel(target, reader, writer)
            else:
                await self._forward(method, target, version, lines[1:], reader, writer)
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError, ValueError, OSError):
            pass  # a malformed or abandoned request: nothing was forwarded
        finally:
            self._open.discard(writer)
            writer.close()

    def _refuse(self, url: str, reason: str) -> None:
        self.refused += 1
        self.on_refused(url, reason, False)

    async def _tunnel(self, target: str, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        host, _, port_text = target.rpartition(":")
        host = canonical_host(host) or ""
        port = int(port_text)
        if not any(site.host == host and site.port == port and not site.prefix for site in self.policy.sites):
            self._refuse(
                f"{target} (tunnel)", f"it is not one of the task's sites; only {self.policy.describe()} may be visited"
            )
            return
        up_reader, up_writer = await asyncio.open_connection(host, port)
        writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        await writer.drain()
        await _both_ways(reader, writer, up_reader, up_writer)

    async def _forward(
        self,
        method: str,
        target: str,
        version: str,
        headers: list[str],
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> None:
        reason = self.policy.refusal(target)
        parts = urllib.parse.urlsplit(target)
        host = canonical_host(parts.hostname or "")
        if reason is not None or host is None or parts.scheme.lower() != "http":
            self._refuse(target, reason or "only the task's http sites may be visited")
            return
        up_reader, up_writer = await asyncio.open_connection(host, parts.port or 80)
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        kept = [h for h in headers if h and h.split(":", 1)[0].strip().lower() not in _HOP_BY_HOP]
        up_writer.write(f"{method} {path} {version}\r\n{_joined(kept)}Connection: close\r\n\r\n".encode("latin-1"))
        await up_writer.drain()
        body = asyncio.ensure_future(_pipe(reader, up_writer, close=False))  # the request's body, if any
        try:
            answer = await up_reader.readuntil(b"\r\n\r\n")
            status, *rest = answer.decode("latin-1").split("\r\n")
            kept = [h for h in rest if h and h.split(":", 1)[0].strip().lower() not in _HOP_BY_HOP]
            writer.write(f"{status}\r\n{_joined(kept)}Connection: close\r\n\r\n".encode("latin-1"))
            await _pipe(up_reader, writer, close=False)
        finally:
            body.cancel()
            up_writer.close()


def _joined(headers: list[str]) -> str:
    return "".join(f"{h}\r\n" for h in headers)


async def _pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter, *, close: bool = True) -> None:
    try:
        while data := await source.read(65536):
            sink.write(data)
            await sink.drain()
    except (ConnectionError, OSError):
        pass  # either end hung up: the exchange is over
    finally:
        if close:
            sink.close()


async def _both_ways(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    up_reader: asyncio.StreamReader,
    up_writer: asyncio.StreamWriter,
) -> None:
    await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))
