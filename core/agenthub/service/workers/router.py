"""A worker's ASGI layer: pass a call for another worker's session on to it, and answer ``/healthz`` for all.

On the hot path (a call at the worker that holds the session) it costs one ``str.startswith``. A call that
reached another worker through the shared port (a client that does not follow the create's ``Location``,
or one that did not create the session) is forwarded over loopback to the worker that holds the session,
headers and token included, and its answer sent back with ``Via``: it works for every client, at the cost
of a second hop. A redirect would not: HTTP clients drop ``Authorization`` on a redirect to another port.
"""

from __future__ import annotations

import asyncio
from typing import Any

import aiohttp
import orjson
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from yarl import URL

from agenthub.service.workers.plan import read_mark, session_mark

SESSIONS = "/v1/sessions/"
HEALTH_TIMEOUT_S = 2.0
CONNECT_TIMEOUT_S = 5.0
_HOP_BY_HOP = frozenset(
    (b"connection", b"keep-alive", b"transfer-encoding", b"te", b"trailer", b"upgrade", b"host", b"content-length")
)
_NO_TIMEOUT = aiohttp.ClientTimeout(total=None, sock_connect=CONNECT_TIMEOUT_S)
"""A forwarded call takes as long as the env does; the worker's own step_timeout bounds it."""


class WorkerRouter:
    """Wraps one worker's app; ``urls`` are all workers' own base URLs, ``public_port`` the port they share."""

    def __init__(
        self, app: ASGIApp, *, index: int, generation: int, urls: list[str], public_port: int, max_body_bytes: int
    ) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes
        self.index = index
        self.generation = generation
        self.urls = urls
        self.public_port = public_port
        self._own = SESSIONS + session_mark(index, generation)
        self._via = f"1.1 agenthub-worker-{index}".encode()
        self._http: aiohttp.ClientSession | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            path: str = scope["path"]
            if path.startswith(SESSIONS) and not path.startswith(self._own):
                if await self._elsewhere(scope, receive, send):
                    return
            elif path == "/healthz" and _local_port(scope) == self.public_port:
                await self._health_of_all(send)
                return
        elif scope["type"] == "lifespan":
            await self.app(scope, receive, self._closing_on_shutdown(send))
            return
        await self.app(scope, receive, send)

    def _client(self) -> aiohttp.ClientSession:
        if self._http is None:
            self._http = aiohttp.ClientSession(auto_decompress=False, skip_auto_headers=("User-Agent",))
        return self._http

    async def _elsewhere(self, scope: Scope, receive: Receive, send: Send) -> bool:
        """Answer a call for a session this worker does not hold; False to let the app answer (404)."""
        session_id = scope["path"][len(SESSIONS) :].split("/", 1)[0]
        mark = read_mark(session_id)
        if mark is None or mark[0] >= len(self.urls):
            return False
        worker, generation = mark
        if worker != self.index:
            await self._forward(worker, session_id, scope, receive, send)
            return True
        if generation >= self.generation:
            return False
        message = (
            f"session {session_id!r} was held by worker {worker} of this server, which exited and was "
            "restarted: the sessions it held are lost; create a new session with POST /v1/sessions"
        )
        await _answer(send, 404, _error("session_not_found", message))
        return True

    async def _forward(self, worker: int, session_id: str, scope: Scope, receive: Receive, send: Send) -> None:
        body = await _read_body(receive, self.max_body_bytes)
        if body is None:
            return  # the client went away
        if len(body) > self.max_body_bytes:
            message = f"the request body is over this server's max_body_bytes ({self.max_body_bytes}); send less"
            await _answer(send, 413, _error("body_too_large", message))
            return
        target = self.urls[worker] + scope.get("raw_path", scope["path"].encode()).decode("latin-1")
        query = scope.get("query_string", b"").decode("latin-1")
        headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in scope["headers"] if k not in _HOP_BY_HOP]
        try:
            async with self._client().request(
                scope["method"],
                URL(target + (f"?{query}" if query else ""), encoded=True),  # as the client sent it
                data=body or None,
                headers=headers,
                allow_redirects=False,
                timeout=_NO_TIMEOUT,
            ) as answer:
                content = await answer.read()
                raw = [
                    (k.lower(), v)
                    for k, v in answer.raw_headers
                    if k.lower() not in _HOP_BY_HOP and k.lower() not in (b"date", b"server")
                ]
        except (aiohttp.ClientError, TimeoutError) as exc:
            message = (
                f"worker {worker} of this server ({self.urls[worker]}), which holds session {session_id!r}, "
                f"did not answer: {exc or type(exc).__name__}; retry shortly: if it exited, it is being restarted "
                "and the session is lost"
            )
            await _answer(send, 503, _error("worker_unavailable", message))
            return
        await _answer(send, answer.status, content, [*raw, (b"via", self._via)])

    async def _health_of_all(self, send: Send) -> None:
        answers = await asyncio.gather(*(self._health_of(i, url) for i, url in enumerate(self.urls)))
        down = [problem for _, problem in answers if problem is not None]
        if down:
            message = "; ".join(down) + (
                ": a worker that exits is restarted by the supervisor (its sessions are lost); "
                "retry shortly, and read the server's log if it stays down"
            )
            await _answer(send, 503, _error("worker_unavailable", message))
            return
        workers = [health for health, _ in answers if health is not None]
        body = {
            "status": "ok",
            "env": workers[0]["env"],
            "sessions": sum(int(w["sessions"]) for w in workers),
            "workers": [
                {"worker": i, "url": url, "sessions": w["sessions"]}
                for (i, url), w in zip(enumerate(self.urls), workers, strict=True)
            ],
        }
        await _answer(send, 200, orjson.dumps(body))

    async def _health_of(self, index: int, url: str) -> tuple[dict[str, Any] | None, str | None]:
        """One worker's own /healthz (asked at its own port), or why it has none."""
        try:
            timeout = aiohttp.ClientTimeout(total=HEALTH_TIMEOUT_S)
            async with self._client().get(url + "/healthz", timeout=timeout) as answer:
                if answer.status == 200:
                    return await answer.json(), None
                return None, f"worker {index} of {len(self.urls)} ({url}) answered /healthz with {answer.status}"
        except (aiohttp.ClientError, TimeoutError) as exc:
            reason = f"no answer within {HEALTH_TIMEOUT_S:g}s" if isinstance(exc, TimeoutError) else str(exc)
            return None, f"worker {index} of {len(self.urls)} ({url}) did not answer /healthz: {reason}"

    def _closing_on_shutdown(self, send: Send) -> Send:
        async def sending(message: Message) -> None:
            if message["type"].startswith("lifespan.shutdown") and self._http is not None:
                await self._http.close()
                self._http = None
            await send(message)

        return sending


def _local_port(scope: Scope) -> int | None:
    server = scope.get("server")
    return int(server[1]) if server and len(server) > 1 and server[1] is not None else None


def _error(code: str, message: str) -> bytes:
    return orjson.dumps({"error": {"code": code, "message": message}})


async def _read_body(receive: Receive, limit: int) -> bytes | None:
    """The body, or None if the client went away; reading stops once past ``limit`` bytes."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return None
        chunks.append(message.get("body", b""))
        size += len(chunks[-1])
        if not message.get("more_body", False) or size > limit:
            return b"".join(chunks)


async def _answer(send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]] | None = None) -> None:
    given = headers or []
    if not any(k == b"content-type" for k, _ in given) and body:
        given = [(b"content-type", b"application/json"), *given]
    raw = [*given, (b"content-length", b"%d" % len(body))] if status not in (204, 304) else given
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})
