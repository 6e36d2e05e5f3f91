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
from importlib.resources import files
from typing import Any, Literal

import orjson
from fastapi import FastAPI, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match
from starlette.types import Receive, Scope, Send

from agenthub.protocols import Environment
from agenthub.service.env_service import EnvService, encode_json
from agenthub.service.lean_routes import ErrorAnswer, LeanRoutes
from agenthub.service.middleware import BearerTokenMiddleware, BodyLimitMiddleware, CountError
from agenthub.service.routing import session_location
from agenthub.service.sessions import ServiceError
from agenthub.service.settings import ServiceSettings, apply_env_defaults
from agenthub.specs import EnvSpec
from agenthub.types import (
    MAX_TASK_ID,
    MIN_SEED,
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
    status: {"model": ErrorBody} for status in (400, 401, 404, 409, 413, 415, 422, 429, 500, 503, 504)
}
DOCS_ASSETS = "/docs-assets"
"""Where /docs and /redoc load their scripts from: this server, not a CDN, so the pages work offline."""
_PROMETHEUS_TEXT = "text/plain; version=0.0.4; charset=utf-8"


class Health(BaseModel):
    status: Literal["ok"]
    env: str
    sessions: int = Field(description="Sessions held now.")


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
    count_error: CountError | None = None
    """Counts an error answer by code; also used by the HTTP protocol for requests it cannot parse."""

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
        docs_url=None,  # served below from local assets
        redoc_url=None,
    )
    app.state.service = service

    def count_error(code: str) -> None:
        service.metrics.errors.labels(code=code).inc()

    app.count_error = count_error

    def error(
        status: int, code: str, message: str, headers: dict[str, str] | None
    ) -> tuple[int, bytes, dict[str, str] | None]:
        """An error answer, counted in the metrics; shared by FastAPI's handlers and the lean routes."""
        count_error(code)
        return status, orjson.dumps({"error": {"code": code, "message": message}}), headers

    _install_error_handlers(app, error)
    _install_routes(app, service)
    _install_docs(app)
    _document_env(app, list(service.splits), service.players)
    # Outermost last: the body limit applies before authentication reads anything.
    if settings.token:
        app.add_middleware(BearerTokenMiddleware, token=settings.token, count=count_error)
    app.add_middleware(BodyLimitMiddleware, max_bytes=settings.max_body_bytes, count=count_error)
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
        content_type = request.headers.get("content-type")
        if request.method == "POST" and not _is_json(content_type):
            # FastAPI does not parse a body of another type, and would only say that the body is missing.
            got = f"Content-Type {content_type!r}" if content_type else "no Content-Type"
            return error(
                415,
                "unsupported_media_type",
                f"the request has {got}; send the body as a JSON object with 'Content-Type: application/json'",
            )
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
            allowed = _allowed_methods(app, request.scope)
            return error(
                405,
                "method_not_allowed",
                f"{request.method} is not allowed on {request.url.path}; it allows {', '.join(allowed)}",
                {"Allow": ", ".join(allowed)},
            )
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
    # A single-player env's info stays as it was before seats existed.
    info_body = orjson.dumps(service.info.model_dump(exclude=None if service.players > 1 else {"players", "seats"}))

    @app.get("/healthz", response_model=Health)
    async def healthz() -> Response:
        return _json({"status": "ok", "env": service.spec.name, "sessions": len(table)})

    @app.get(
        "/metrics",
        response_class=Response,
        responses={
            200: {
                "description": "The server's metrics in Prometheus' text exposition format (version 0.0.4).",
                "content": {"text/plain": {"schema": {"type": "string"}}},
            }
        },
    )
    async def prometheus_metrics() -> Response:
        metrics.sessions_active.set(len(table))
        return Response(metrics.render(), media_type=_PROMETHEUS_TEXT)

    @app.get("/v1/info", response_model=EnvInfo)
    async def info() -> Response:
        return Response(info_body, media_type="application/json")

    @app.get("/v1/tasks", response_model=TaskList)
    async def tasks(split: str | None = None) -> Response:
        name = service.default_split if split is None else split  # "" is no split name, not "the default"
        if name not in service.splits:
            raise ServiceError(
                422, "unknown_split", f"unknown split {name!r}; this env has: {', '.join(service.splits)}"
            )
        tasks = service.splits[name]
        return _json({"split": name, "count": tasks.count, **tasks.model_dump(exclude_none=True)})

    @app.post("/v1/sessions", status_code=201, response_model=SessionCreated)
    async def create_session(body: CreateSessionRequest) -> Response:
        answer = await service.create_session(body)
        headers = session_location(service.settings.advertise_url, answer)
        return Response(answer, 201, media_type="application/json", headers=headers)

    @app.post("/v1/sessions/{session_id}/reset", response_model=ResetResult)
    async def reset_session(session_id: str, body: ResetRequest) -> Response:
        return Response(await service.reset_session(session_id, body), media_type="application/json")

    @app.post("/v1/sessions/{session_id}/step", response_model=StepResult)
    async def step_session(session_id: str, body: StepRequest) -> Response:
        reply, replayed = await service.step_session(session_id, body)
        headers = {"Idempotent-Replayed": "true"} if replayed else None
        return Response(reply, media_type="application/json", headers=headers)

    @app.get("/v1/sessions/{session_id}", response_model=SessionState)
    async def get_session(session_id: str) -> Response:
        return _json(table.get(session_id).state())

    @app.delete("/v1/sessions/{session_id}", status_code=204)
    async def delete_session(session_id: str) -> Response:
        await service.close_session(session_id)
        return Response(status_code=204)


def _install_docs(app: FastAPI) -> None:
    """/docs (Swagger UI) and /redoc with their scripts served by this app (from fastapi-offline's package data)."""
    assets = files("fastapi_offline") / "static"
    app.mount(DOCS_ASSETS, StaticFiles(directory=str(assets)), name="docs-assets")
    title = app.title

    @app.get("/docs", include_in_schema=False)
    async def swagger_ui(request: Request) -> Response:
        root = request.scope.get("root_path", "")
        return get_swagger_ui_html(
            openapi_url=f"{root}{app.openapi_url}",
            title=f"{title}: API",
            swagger_js_url=f"{root}{DOCS_ASSETS}/swagger-ui-bundle.js",
            swagger_css_url=f"{root}{DOCS_ASSETS}/swagger-ui.css",
            swagger_favicon_url=f"{root}{DOCS_ASSETS}/favicon.png",
        )

    @app.get("/redoc", include_in_schema=False)
    async def redoc(request: Request) -> Response:
        root = request.scope.get("root_path", "")
        return get_redoc_html(
            openapi_url=f"{root}{app.openapi_url}",
            title=f"{title}: API",
            redoc_js_url=f"{root}{DOCS_ASSETS}/redoc.standalone.js",
            redoc_favicon_url=f"{root}{DOCS_ASSETS}/favicon.png",
            with_google_fonts=False,
        )


_REFUSALS: dict[tuple[str, str], tuple[str, ...]] = {
    ("/v1/tasks", "get"): ("invalid_request", "unknown_split"),
    ("/v1/sessions", "post"): ("invalid_request", "unknown_split", "unknown_task", "invalid_reset"),
    ("/v1/sessions/{session_id}/reset", "post"): ("invalid_request", "invalid_reset"),
}
"""Which ``422`` codes each operation can answer (step's depend on the env's seats). Of these, only
``unknown_task`` (a task id not in the split named with it) and ``invalid_reset`` (an id or options the
env refuses) can answer a request that matches the schema: no schema says which ids and options an env takes."""


def _document_env(app: FastAPI, splits: list[str], players: int) -> None:
    """Publish this env's own document: its split names as the enum of every ``split`` field, ``seat`` only
    where the env has seats (required, bounded to them), and each operation's ``422`` codes."""

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = FastAPI.openapi(app)
            named = {"type": "string", "enum": splits}
            body = schema["components"]["schemas"]["CreateSessionRequest"]["properties"]["split"]
            body["anyOf"] = [named, {"type": "null"}]
            for parameter in schema["paths"]["/v1/tasks"]["get"].get("parameters", []):
                if parameter["name"] == "split":
                    parameter["schema"]["anyOf"] = [named, {"type": "null"}]
            _document_seats(schema["components"]["schemas"]["StepRequest"], players)
            _document_refusals(schema, players)
            _exact_bounds(schema)
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]


_EXACT = {float(MAX_TASK_ID): MAX_TASK_ID, float(MIN_SEED): MIN_SEED}
"""FastAPI's OpenAPI models hold bounds as floats, and 2**63-1 as a float is 2**63, one past the range."""


def _exact_bounds(node: Any) -> None:
    """Integer bounds back as exact integers, so that the document states the range the models check."""
    if isinstance(node, dict):
        for key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
            value = node.get(key)
            if isinstance(value, float) and value.is_integer() and node.get("type") == "integer":
                node[key] = _EXACT.get(value, int(value))
        for child in node.values():
            _exact_bounds(child)
    elif isinstance(node, list):
        for child in node:
            _exact_bounds(child)


def _document_seats(step: dict[str, Any], players: int) -> None:
    """A single-player env's step takes no ``seat``; a multi-player env's requires one of its seats."""
    if players == 1:
        step["properties"].pop("seat", None)
        return
    step["properties"]["seat"] = {
        "type": "integer",
        "minimum": 0,
        "maximum": players - 1,
        "title": "Seat",
        "description": f"The seat that acts, from 0 to {players - 1}: the seat named on turn by the last answer.",
    }
    step["required"] = sorted({*step.get("required", []), "seat"})
    step["examples"] = [{"action": "look", "seat": 0, "request_id": "a1b2c3"}]


def _document_refusals(schema: dict[str, Any], players: int) -> None:
    step_codes = ("seat_required", "unknown_seat") if players > 1 else ("seat_not_expected",)
    refusals = {**_REFUSALS, ("/v1/sessions/{session_id}/step", "post"): ("invalid_request", *step_codes)}
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            response = operation.get("responses", {}).get("422")
            if response is None:
                continue
            codes = list(refusals.get((path, method), ("invalid_request",)))
            response["x-error-codes"] = codes
            response["description"] = "Refused, with one of the codes: " + ", ".join(f"`{c}`" for c in codes)


def _allowed_methods(app: FastAPI, scope: Scope) -> list[str]:
    """Every method some route accepts on this path, for a 405's ``Allow`` header (RFC 9110)."""
    methods: set[str] = set()
    for route in app.router.routes:
        route_methods = getattr(route, "methods", None)
        if route_methods and route.matches(scope)[0] != Match.NONE:
            methods |= route_methods
    return sorted(methods)


def _is_json(content_type: str | None) -> bool:
    if not content_type:
        return False
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or media.endswith("+json")
