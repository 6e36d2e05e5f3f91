"""Run one environment server with uvicorn until SIGTERM or SIGINT."""

from __future__ import annotations

import asyncio
import errno
import gc
import inspect
import logging
import os
import socket
import sys
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, ParamSpec, cast

import uvicorn
from starlette.types import ASGIApp

from agenthub.errors import AgenthubError
from agenthub.service.http_protocol import http_protocol
from agenthub.service.ready_file import write_ready_file
from agenthub.service.server import create_app
from agenthub.service.settings import ServiceSettings
from agenthub.specs import EnvSpec

P = ParamSpec("P")


class PortUnavailableError(AgenthubError, OSError):
    """The address to listen on is taken or not allowed; the message names it and what to do."""


def bind_socket(host: str, port: int, *, reuse_port: bool = False) -> socket.socket:
    """Bind before starting uvicorn, so port 0 gives a real port we can report.

    ``reuse_port``: SO_REUSEPORT, so that several worker processes each listen on the same port and the
    kernel spreads connections over them (``agenthub.service.workers``).
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if reuse_port:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            advice = f"port {port} is in use; choose another port=..., port=0 for a free one, or stop what holds it"
        elif exc.errno == errno.EACCES:
            advice = f"port {port} needs privileges here; choose a port above 1023, or port=0 for a free one"
        else:
            advice = f"check host={host} (an address of this machine, e.g. 127.0.0.1) and port={port}"
        # An AgenthubError: the CLI shows it as one line, not a traceback.
        raise PortUnavailableError(f"cannot listen on {host}:{port} ({exc.strerror}): {advice}") from None
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def url_of(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop when installed (a core dependency on Linux), else asyncio's default loop.

    Measured: with asyncio's default loop a threaded server answered in ~40 ms
    (small writes meet delayed ACKs); with uvloop in ~1 ms.
    """
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop


def uvicorn_config(
    spec: EnvSpec, settings: ServiceSettings, *, log_level: str = "warning", mcp: bool = False
) -> uvicorn.Config:
    """``mcp``: the app also answers MCP at /mcp, over the same sessions (``agenthub.service.mcp``)."""
    app = create_app(spec, settings)
    if mcp:
        from agenthub.service.mcp import mount_mcp  # needs the optional mcp SDK; says how to install it

        mount_mcp(app)
    return uvicorn.Config(
        app,
        log_level=log_level,
        log_config=None,  # leave the host process's logging alone (servers also run in threads)
        access_log=False,
        # Servers bind to loopback by default and never read the client's address: X-Forwarded-*
        # parsing would only cost CPU on every request.
        proxy_headers=False,
        timeout_graceful_shutdown=10,
        http=http_protocol(),
    )


async def serve_async(
    spec: EnvSpec,
    settings: ServiceSettings,
    *,
    ready_file: Path | None = None,
    mcp: bool = False,
    sockets: list[socket.socket] | None = None,
    wrap_app: Callable[[ASGIApp], ASGIApp] | None = None,
) -> None:
    """``sockets``: listen on these (already bound) instead of binding ``settings``' host and port; the
    first one's address is the one reported. ``wrap_app``: an ASGI layer around the app (a worker's router)."""
    config = uvicorn_config(spec, settings, mcp=mcp)
    if wrap_app is not None:
        config.app = wrap_app(cast(ASGIApp, config.app))  # uvicorn_config always passes the app itself
    if sockets is None:
        sockets = [bind_socket(settings.host, settings.port)]
    sock = sockets[0]
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve(sockets=sockets))
    while not server.started and not task.done():  # noqa: ASYNC110 - uvicorn offers no startup event
        await asyncio.sleep(0.01)
    if server.started:
        # Everything built so far (modules, the app, an inline env's first instance and its data)
        # lives as long as the process: keep it out of the collector's scans. Measured under load,
        # a full collection took ~45 ms with textcraft's recipe book in the heap, stalling every session.
        gc.freeze()
        url = url_of(sock)
        also = f", MCP at {url}/mcp" if mcp else ""
        print(f"agenthub: serving env {spec.name!r} on {url}{also} (pid {os.getpid()})", file=sys.stderr, flush=True)
        if ready_file is not None:
            ready = {"url": url, "pid": os.getpid(), "env": spec.name} | ({"mcp_url": f"{url}/mcp"} if mcp else {})
            write_ready_file(ready_file, ready)
    await task
    for each in sockets:
        each.close()


def _blocking(serve_async: Callable[P, Coroutine[Any, Any, None]]) -> Callable[P, None]:
    """``serve_async`` run to its end on a loop of its own: its very parameters (one signature for both)."""

    def serve(*args: P.args, **kwargs: P.kwargs) -> None:
        logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)
        with asyncio.Runner(loop_factory=loop_factory()) as runner:
            runner.run(serve_async(*args, **kwargs))

    serve.__qualname__ = "serve"
    serve.__doc__ = "Serve until SIGTERM/SIGINT; on the way out every session is closed. " + (serve_async.__doc__ or "")
    serve.__signature__ = inspect.signature(serve_async)  # type: ignore[attr-defined]  # help() shows the parameters
    return serve


serve = _blocking(serve_async)
