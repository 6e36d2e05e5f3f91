"""``create_app``: any Environment as a FastAPI app speaking protocol v1.

Environment code (construction, reset, step, close) runs in the app's own
thread pool, never on the event loop. Each session has a lock, so two
requests on one session never interleave.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import orjson
from fastapi import FastAPI, Request, Response
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException

from agenthub.protocols import Environment
from agenthub.service.metrics import ServiceMetrics
from agenthub.service.middleware import BearerTokenMiddleware, BodyLimitMiddleware
from agenthub.service.sessions import ServiceError, Session, SessionTable
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

log = logging.getLogger("agenthub.service")
T = TypeVar("T")

_ERRORS: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorBody} for status in (400, 401, 404, 409, 413, 422, 429, 500, 503, 504)
}


def _json(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    try:
        body = orjson.dumps(data, option=orjson.OPT_SERIALIZE_NUMPY)
    except TypeError as exc:
        raise ServiceError(
            500,
            "env_contract",
            f"the environment returned something that is not JSON-serializable ({exc}); "
            "observations must be str and info values plain JSON types",
        ) from None
    return Response(body, status_code=status, media_type="application/json", headers=headers)


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
    )


class EnvService:
    """The state behind one app: the spec, the session table, the thread pool, metrics."""

    def __init__(self, spec: EnvSpec, settings: ServiceSettings) -> None:
        self.spec = spec
        self.settings = settings
        self.info: EnvInfo = spec.info()
        self.splits = spec.resolved_splits()
        self.default_split = next(iter(self.splits))
        self.table = SessionTable(
            max_sessions=settings.max_sessions, ttl_s=settings.ttl, remembered_replies=settings.remembered_replies
        )
        self.metrics = ServiceMetrics(spec.name)
        self.pool = ThreadPoolExecutor(max_workers=settings.threads, thread_name_prefix=f"env-{spec.name}")
        self.idle_envs: list[Environment] = []
        self._task_rng = random.Random()
        self._reaper: asyncio.Task[None] | None = None

    # -- running environment code off the loop ----------------------------------

    async def run_env(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        loop = asyncio.get_running_loop()
        future = loop.run_in_executor(self.pool, lambda: fn(*args, **kwargs))
        if self.settings.step_timeout is None:
            return await future
        try:
            return await asyncio.wait_for(future, self.settings.step_timeout)
        except TimeoutError:
            raise ServiceError(
                504,
                "env_timeout",
                f"the environment took longer than step_timeout={self.settings.step_timeout:g}s; "
                "the session is abandoned, create a new one",
            ) from None

    async def new_env(self) -> Environment:
        if self.idle_envs:
            return self.idle_envs.pop()
        return await self.run_env(self.spec.make, **self.settings.env_kwargs)

    async def retire_env(self, env: Environment, *, reusable: bool) -> None:
        """Keep a healthy instance for the next session, or close it."""
        if reusable and len(self.idle_envs) < self.settings.idle_envs:
            self.idle_envs.append(env)
            return
        try:
            await self.run_env(env.close)
        except Exception:  # closing must never fail a request
            log.exception("closing an environment instance failed")

    async def end_session(self, session: Session, reason: str) -> None:
        async with session.lock:
            await self.retire_env(session.env, reusable=session.failure is None)
        self.metrics.sessions_closed.labels(reason=reason).inc()
        self.metrics.sessions_active.set(len(self.table))

    # -- task selection --------------------------------------------------------

    def choose_task(self, task_id: Any, split: str | None, seed: int | None) -> Any:
        if split is not None and split not in self.splits:
            raise ServiceError(422, "unknown_split", f"unknown split {split!r}; this env has: {', '.join(self.splits)}")
        if task_id is not None:
            if split is not None and task_id not in self.splits[split]:
                raise ServiceError(422, "unknown_task", f"task {task_id!r} is not in split {split!r}")
            return task_id
        tasks = self.splits[split or self.default_split]
        rng = random.Random(seed) if seed is not None else self._task_rng
        index = rng.randrange(tasks.count)
        if tasks.ids is not None:
            return tasks.ids[index]
        assert tasks.start is not None
        return tasks.start + index

    async def reset_env(self, env: Environment, task_id: Any, seed: int | None, options: dict[str, Any]) -> Any:
        try:
            observation, info = await self.run_env(env.reset, task_id=task_id, seed=seed, options=options)
        except ValueError as exc:
            raise ServiceError(422, "invalid_reset", f"the environment refused the reset: {exc}") from None
        if not isinstance(observation, str) or not isinstance(info, dict):
            raise ServiceError(
                500, "env_contract", "the environment's reset must return (observation: str, info: dict)"
            )
        return observation, info

    # -- background expiry -------------------------------------------------------

    async def reap_forever(self) -> None:
        interval = max(0.05, min(self.settings.ttl / 4, 30.0))
        while True:
            await asyncio.sleep(interval)
            for session in self.table.pop_expired():
                await self.end_session(session, "expired")

    async def start(self) -> None:
        self._reaper = asyncio.create_task(self.reap_forever())

    async def stop(self) -> None:
        if self._reaper is not None:
            self._reaper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reaper
        sessions = self.table.pop_all()
        for session in sessions:
            await self.end_session(session, "shutdown")
        for env in self.idle_envs:
            with contextlib.suppress(Exception):
                await self.run_env(env.close)
        self.idle_envs.clear()
        self.pool.shutdown(wait=False, cancel_futures=True)
        log.info("agenthub: %s server stopped; closed %d sessions", self.spec.name, len(sessions))


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

    app = FastAPI(
        title=f"agenthub env: {spec.name}",
        version=spec.version or "0",
        description=spec.description,
        lifespan=lifespan,
        responses=_ERRORS,
    )
    app.state.service = service
    _install_error_handlers(app, service)
    _install_routes(app, service)
    # Outermost last: the body limit applies before authentication reads anything.
    if settings.token:
        app.add_middleware(BearerTokenMiddleware, token=settings.token)
    app.add_middleware(BodyLimitMiddleware, max_bytes=settings.max_body_bytes)
    return app


def _install_error_handlers(app: FastAPI, service: EnvService) -> None:
    def error(status: int, code: str, message: str, headers: dict[str, str] | None = None) -> Response:
        service.metrics.errors.labels(code=code).inc()
        return _json({"error": {"code": code, "message": message}}, status, headers)

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
        task_id = service.choose_task(body.task_id, body.split, body.seed)
        table.reserve()
        env: Environment | None = None
        try:
            env = await service.new_env()
            observation, reset_info = await service.reset_env(env, task_id, body.seed, body.options)
        except BaseException as exc:
            table.release_reservation()
            if env is not None:
                await service.retire_env(env, reusable=isinstance(exc, ServiceError) and exc.status == 422)
            raise
        session = Session(env=env, task_id=task_id)
        table.add(session)
        metrics.sessions_created.inc()
        metrics.sessions_active.set(len(table))
        return _json(
            {"session_id": session.id, "task_id": task_id, "observation": observation, "info": reset_info}, 201
        )

    @app.post("/v1/sessions/{session_id}/reset", response_model=ResetResult)
    async def reset_session(session_id: str, body: ResetRequest) -> Response:
        session = table.get(session_id)
        async with session.lock:
            _refuse_if_failed(session)
            task_id = session.task_id if body.task_id is None else service.choose_task(body.task_id, None, None)
            observation, reset_info = await _guard(
                session, service.reset_env(session.env, task_id, body.seed, body.options)
            )
            session.task_id = task_id
            session.turns = 0
            session.done = False
            session.replies.clear()
            session.touch()
        return _json({"observation": observation, "info": reset_info})

    @app.post("/v1/sessions/{session_id}/step", response_model=StepResult)
    async def step_session(session_id: str, body: StepRequest) -> Response:
        session = table.get(session_id)
        async with session.lock:
            if body.request_id is not None and body.request_id in session.replies:
                session.touch()
                return _json(session.replies[body.request_id], headers={"Idempotent-Replayed": "true"})
            _refuse_if_failed(session)
            if session.done:
                raise ServiceError(
                    409,
                    "episode_done",
                    f"the episode in session {session_id!r} has ended; reset it "
                    f"(POST /v1/sessions/{session_id}/reset) or create a new session",
                )
            started = time.perf_counter()
            reply = await _guard(session, _apply_step(service, session, body))
            metrics.step_seconds.observe(time.perf_counter() - started)
            session.turns += 1
            session.done = reply["terminated"] or reply["truncated"]
            if body.request_id is not None:
                session.remember(body.request_id, reply, table.remembered_replies)
            session.touch()
            metrics.steps.inc()
        return _json(reply)

    @app.get("/v1/sessions/{session_id}", response_model=SessionState)
    async def get_session(session_id: str) -> Response:
        return _json(table.get(session_id).state())

    @app.delete("/v1/sessions/{session_id}", status_code=204)
    async def delete_session(session_id: str) -> Response:
        session = table.pop(session_id)
        await service.end_session(session, "closed")
        return Response(status_code=204)


async def _apply_step(service: EnvService, session: Session, body: StepRequest) -> dict[str, Any]:
    return _step_reply(await service.run_env(session.env.step, body.action))


def _refuse_if_failed(session: Session) -> None:
    if session.failure is not None:
        raise ServiceError(
            409,
            "session_failed",
            f"session {session.id!r} is unusable because its environment failed earlier ({session.failure}); "
            "delete it and create a new session",
        )


async def _guard(session: Session, call: Any) -> Any:
    """Await an environment call; if the environment raises or hangs, fail the session."""
    try:
        return await call
    except ServiceError as exc:
        if exc.status >= 500:
            session.failure = exc.message
            session.done = True
        raise
    except Exception as exc:
        session.failure = f"{type(exc).__name__}: {exc}"
        session.done = True
        raise ServiceError(
            500,
            "env_error",
            f"the environment raised {type(exc).__name__}: {exc}; this session is now unusable, create a new one",
        ) from None


def _step_reply(result: Any) -> dict[str, Any]:
    try:
        observation, reward, terminated, truncated, info = result
        reward = float(reward)
    except (TypeError, ValueError):
        raise ServiceError(
            500, "env_contract", "the environment's step must return (observation, reward, terminated, truncated, info)"
        ) from None
    if not isinstance(observation, str) or not isinstance(info, dict):
        raise ServiceError(
            500, "env_contract", "the environment's step returned a non-str observation or non-dict info"
        )
    return {
        "observation": observation,
        "reward": reward,
        "terminated": bool(terminated),
        "truncated": bool(truncated),
        "info": info,
    }
