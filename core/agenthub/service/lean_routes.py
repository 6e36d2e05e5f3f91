"""``LeanRoutes``: the three hot routes of an episode served as plain ASGI, in front of FastAPI.

An episode is one ``POST /v1/sessions``, its steps and one ``DELETE``. Through
FastAPI each of those costs ~0.5 ms of CPU on a slow core before the env runs
(a dozen middleware layers, routing, dependency solving, its own telemetry);
here the path is split once, the body is parsed by orjson and validated by
the same pydantic model FastAPI would use, and the answer is sent as bytes.

Only requests this layer is sure to answer exactly as FastAPI would are
served here: a well-formed JSON object, with ``Content-Type:
application/json`` and a ``Content-Length`` within the body limit, that
validates. Anything else (bad JSON, a validation error, chunked bodies, other
routes) goes on to the FastAPI app, with the body replayed if it was read, so
that every error answer keeps its one implementation there.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TypeVar

import orjson
from pydantic import BaseModel, ValidationError
from starlette.types import ASGIApp, Receive, Scope, Send

from agenthub.service.env_service import EnvService
from agenthub.service.middleware import refused_token, replay_body
from agenthub.service.routing import session_location
from agenthub.service.sessions import ServiceError
from agenthub.types import CreateSessionRequest, StepRequest

log = logging.getLogger("agenthub.service")
M = TypeVar("M", bound=BaseModel)

_JSON_HEADERS = [(b"content-type", b"application/json")]

ErrorAnswer = Callable[[int, str, str, dict[str, str] | None], tuple[int, bytes, dict[str, str] | None]]


class LeanRoutes:
    """Serve create-session, step and delete-session directly; pass everything else to ``app``."""

    def __init__(
        self, app: ASGIApp, service: EnvService, *, max_body_bytes: int, token: str | None, error: ErrorAnswer
    ) -> None:
        self.app = app
        self.service = service
        self.max_body_bytes = max_body_bytes
        self.expected_authorization = None if token is None else f"Bearer {token}".encode()
        self.error = error
        """Builds an error answer (and counts it in the metrics), shared with the FastAPI handlers."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not scope["path"].startswith("/v1/sessions"):
            await self.app(scope, receive, send)
            return
        parts = scope["path"].split("/")  # "", "v1", "sessions"[, id[, "step"]]
        method = scope["method"]
        if len(parts) == 3 and method == "POST":
            await self._with_body(scope, receive, send, CreateSessionRequest, self._create)
        elif len(parts) == 5 and parts[3] and parts[4] == "step" and method == "POST":
            await self._with_body(scope, receive, send, StepRequest, lambda body: self._step(parts[3], body))
        elif len(parts) == 4 and parts[3] and method == "DELETE":
            if not await self._refused(scope, send):
                await self._answer(send, self._delete(parts[3]))
        else:
            await self.app(scope, receive, send)

    # -- the routes ------------------------------------------------------------------------

    async def _create(self, body: CreateSessionRequest) -> tuple[int, bytes, dict[str, str] | None]:
        answer = await self.service.create_session(body)
        return 201, answer, session_location(self.service.settings.advertise_url, answer)

    async def _step(self, session_id: str, body: StepRequest) -> tuple[int, bytes, dict[str, str] | None]:
        reply, replayed = await self.service.step_session(session_id, body)
        return 200, reply, {"Idempotent-Replayed": "true"} if replayed else None

    async def _delete(self, session_id: str) -> tuple[int, bytes, dict[str, str] | None]:
        await self.service.close_session(session_id)
        return 204, b"", None

    # -- requests and answers ------------------------------------------------------------

    async def _with_body(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        model: type[M],
        route: Callable[[M], Awaitable[tuple[int, bytes, dict[str, str] | None]]],
    ) -> None:
        if not self._plain_json_request(scope):
            await self.app(scope, receive, send)
            return
        if await self._refused(scope, send):  # after the size check, as in the FastAPI stack: 413 before 401
            return
        body = await _read_body(receive)
        if body is None:
            return  # the client went away
        try:
            data = orjson.loads(body)
            parsed = model.model_validate(data) if type(data) is dict else None
        except (orjson.JSONDecodeError, ValidationError):
            parsed = None
        if parsed is None:  # FastAPI owns every refusal of bad input: hand it the request as it came
            await self.app(scope, replay_body(body, receive), send)
            return
        await self._answer(send, route(parsed))

    async def _refused(self, scope: Scope, send: Send) -> bool:
        return self.expected_authorization is not None and await refused_token(
            scope, send, self.expected_authorization, self.count_error
        )

    def count_error(self, code: str) -> None:
        self.service.metrics.errors.labels(code=code).inc()

    def _plain_json_request(self, scope: Scope) -> bool:
        length = content_type = None
        for name, value in scope["headers"]:
            if name == b"content-length":
                length = value
            elif name == b"content-type":
                content_type = value
        if length is None or not length.isdigit() or int(length) > self.max_body_bytes:
            return False
        return content_type is not None and content_type.split(b";", 1)[0].strip().lower() == b"application/json"

    async def _answer(self, send: Send, answer: Awaitable[tuple[int, bytes, dict[str, str] | None]]) -> None:
        try:
            status, body, headers = await answer
        except ServiceError as exc:
            status, body, headers = self.error(exc.status, exc.code, exc.message, exc.headers)
        except Exception as exc:
            log.exception("unexpected error on a protocol route")
            status, body, headers = self.error(
                500, "internal_error", f"{type(exc).__name__}: {exc}; see the server log", None
            )
        raw: list[tuple[bytes, bytes]] = []
        if status != 204:
            raw += _JSON_HEADERS
            raw.append((b"content-length", b"%d" % len(body)))
        if headers:
            raw += [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()]
        await send({"type": "http.response.start", "status": status, "headers": raw})
        await send({"type": "http.response.body", "body": body})


async def _read_body(receive: Receive) -> bytes | None:
    """The whole request body, or None if the client disconnected first."""
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return None
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            return chunks[0] if len(chunks) == 1 else b"".join(chunks)
