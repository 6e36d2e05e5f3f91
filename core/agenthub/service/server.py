"""``create_app``: any Environment as a FastAPI app speaking protocol v1.

Environment code runs in the app's thread pool, or inline on the event loop
for envs that declare their calls cheap (see ``env_calls``). Each session has
a lock, so two requests on one session never interleave. The hot routes of
an episode (create, step, delete) are answered by ``LeanRoutes`` before
FastAPI's stack; FastAPI serves everything else, every refusal of bad input,
and the OpenAPI docs of all routes.
"""

from __future__ import annotations

import contextlib
import functools
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any

import orjson
from fastapi import FastAPI, Request, Response
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import Receive, Scope, Send

from agenthub.protocols import Environment
from agenthub.service.env_service import EnvService, encode_json
from agenthub.service.lean_routes import ErrorAnswer, LeanRoutes
from agenthub.service.middleware import BearerTokenMiddleware, BodyLimitMiddleware
from agenthub.service.sessions import ServiceError
from agenthub.service.settings import ServiceSettings, apply_env_defaults
from agenthub.specs import EnvSpec
from agenthub.types import (
    CreateSessionRequest,
    EnvInfo,
    ErrorBody,
    ResetRequest,
    ResetResult,
    SessionCreated,
    SessionState,
    StepRequest,
    StepResult,
    TaskList,
)

__all__ = ["EnvApp", "EnvService", "create_app", "spec_from_factory"]

log = logging.getLogger("agenthub.service")

_ERRORS: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorBody} for status in (400, 401, 404, 409, 413, 422, 429, 500, 503, 504)
}


def _json(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(encode_json(data), status_code=status, media_type="application/json", headers=headers)


def spec_from_factory(factory: Callable[..., Environment]) -> EnvSpec:
    """An EnvSpec for a bare factory, read from optional class attributes."""
    from agenthub.types import TaskSplit

    name = getattr(factory, "name", None) or getattr(factory, "__name__", "env").lower()
    return EnvSpec(
        name=str(name),
        factory=factory,
        splits=getattr(factory, "splits", None) or {"default": TaskSplit.range(0, 1)},
        default_max_turns=int(getattr(factory, "default_max_turns", 30)),
        version=str(getattr(factory, "version", "0")),
        inline_calls=bool(getattr(factory, "inline_calls", False)),
    )


class EnvApp(FastAPI):
    """A FastAPI app that lets ``lean`` answer the hot protocol routes before its own stack runs."""

    lean: LeanRoutes | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.lean is None:
            await super().__call__(scope, receive, send)
        else:
            await self.lean(scope, receive, send)


def create_app(env: EnvSpec | Callable[..., Environment], settings: ServiceSettings | None = None) -> FastAPI:
    """Serve ``env`` (a registered spec, or any callable that builds an Environment) over protocol v1."""
    spec = env if isinstance(env, EnvSpec) else spec_from_factory(env)
    settings = apply_env_defaults(settings or ServiceSettings(), spec.service_defaults, env_name=spec.name)
    service = EnvService(spec, settings)

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await service.start()
        try:
            yield
        finally:
            await service.stop()

    app = EnvApp(
        title=f"agenthub env: {spec.name}",
        version=spec.version or "0",
        description=spec.description,
        lifespan=lifespan,
        responses=_ERRORS,
    )
    app.state.service = service

    def error(
        status: int, code: str, message: str, headers: dict[str, str] | None
    ) -> tuple[int, bytes, dict[str, str] | None]:
        """An error answer, counted in the metrics; shared by FastAPI's handlers and the lean routes."""
        service.metrics.errors.labels(code=code).inc()
        return status, orjson.dumps({"error": {"code": code, "message": message}}), headers

    _install_error_handlers(app, error)
    _install_routes(app, service)
    # Outermost last: the body limit applies before authentication reads anything.
    if settings.token:
        app.add_middleware(BearerTokenMiddleware, token=settings.token)
    app.add_middleware(BodyLimitMiddleware, max_bytes=settings.max_body_bytes)
    if settings.lean_routes:
        app.lean = LeanRoutes(
            functools.partial(FastAPI.__call__, app),
            service,
            max_body_bytes=settings.max_body_bytes,
            token=settings.token,
            error=error,
        )
    return app


def _install_error_handlers(app: FastAPI, answer: ErrorAnswer) -> None:
    def error(status: int, code: str, message: str, headers: dict[str, str] | None = None) -> Response:
        status, body, headers = answer(status, code, message, headers)
        return Response(body, status_code=status, media_type="application/json", headers=headers)

    @app.exception_handler(ServiceError)
    async def on_service_error(request: Request, exc: ServiceError) -> Response:
        return error(exc.status, exc.code, exc.message, exc.headers)

    @app.exception_handler(RequestValidationError)
    async def on_validation_error(request: Request, exc: RequestValidationError) -> Response:
        problems = exc.errors()
        if any(p.get("type") == "json_invalid" for p in problems):
            return error(400, "malformed_json", "the request body is not valid JSON; send a JSON object")
        parts = []
        for p in problems:
            where = ".".join(str(x) for x in p.get("loc", ()) if x != "body") or "body"
            parts.append(f"{where}: {p.get('msg')}")
        return error(422, "invalid_request", "; ".join(parts) + f" (see /docs for the {request.url.path} schema)")

    @app.exception_handler(StarletteHTTPException)
    async def on_http_error(request: Request, exc: StarletteHTTPException) -> Response:
        if exc.status_code == 404:
            return error(404, "no_such_route", f"no route {request.url.path!r}; protocol v1 routes are under /v1")
        if exc.status_code == 405:
            return error(405, "method_not_allowed", f"{request.method} is not allowed on {request.url.path}")
        return error(exc.status_code, "http_error", str(exc.detail))

    @app.exception_handler(Exception)
    async def on_unexpected(request: Request, exc: Exception) -> Response:
        log.exception("unexpected error on %s %s", request.method, request.url.path)
        return error(500, "internal_error", f"{type(exc).__name__}: {exc}; see the server log")


def _install_routes(app: FastAPI, service: EnvService) -> None:
    """Every protocol route; with ``lean_routes`` on, create, step and delete are answered before these
    in the common case, and these stay as their documentation and for every other request."""
    table = service.table
    metrics = service.metrics
    info_body = orjson.dumps(service.info.model_dump())

    @app.get("/healthz")
    async def healthz() -> Response:
        return _json({"status": "ok", "env": service.spec.name, "sessions": len(table)})

    @app.get("/metrics")
    async def prometheus_metrics() -> Response:
        metrics.sessions_active.set(len(table))
        return Response(metrics.render(), media_type="text/plain; version=0.0.4")

    @app.get("/v1/info", response_model=EnvInfo)
    async def info() -> Response:
        return Response(info_body, media_type="application/json")

    @app.get("/v1/tasks", response_model=TaskList)
    async def tasks(split: str | None = None) -> Response:
        name = split or service.default_split
        if name not in service.splits:
            raise ServiceError(
                422, "unknown_split", f"unknown split {name!r}; this env has: {', '.join(service.splits)}"
            )
        tasks = service.splits[name]
        return _json({"split": name, "count": tasks.count, **tasks.model_dump(exclude_none=True)})

    @app.post("/v1/sessions", status_code=201, response_model=SessionCreated)
    async def create_session(body: CreateSessionRequest) -> Response:
        return _json(await service.create_session(body), 201)

    @app.post("/v1/sessions/{session_id}/reset", response_model=ResetResult)
    async def reset_session(session_id: str, body: ResetRequest) -> Response:
        return _json(await service.reset_session(session_id, body))

    @app.post("/v1/sessions/{session_id}/step", response_model=StepResult)
    async def step_session(session_id: str, body: StepRequest) -> Response:
        reply, replayed = await service.step_session(session_id, body)
        return _json(reply, headers={"Idempotent-Replayed": "true"} if replayed else None)

    @app.get("/v1/sessions/{session_id}", response_model=SessionState)
    async def get_session(session_id: str) -> Response:
        return _json(table.get(session_id).state())

    @app.delete("/v1/sessions/{session_id}", status_code=204)
    async def delete_session(session_id: str) -> Response:
        await service.close_session(session_id)
        return Response(status_code=204)
