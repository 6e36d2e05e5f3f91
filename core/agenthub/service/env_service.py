"""``EnvService``: the state behind one server and the protocol's session operations.

The operations take validated request models and return plain JSON-ready
dicts, so that the FastAPI routes and the lean hot path (``lean_routes``)
share one implementation. Each session has a lock, so two requests on one
session never interleave.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import re
import time
from typing import Any

import orjson

from agenthub.protocols import Environment, MultiPlayerEnvironment
from agenthub.service.action_limit import too_long_reply
from agenthub.service.env_calls import EnvCalls
from agenthub.service.prometheus_metrics import ServiceMetrics
from agenthub.service.seats import check_seat, check_seat_fits, seat_reply, seat_reset
from agenthub.service.sessions import ServiceError, Session, SessionTable, new_session_id
from agenthub.service.settings import ServiceSettings
from agenthub.specs import EnvSpec
from agenthub.types import CreateSessionRequest, EnvInfo, ResetRequest, StepRequest

log = logging.getLogger("agenthub.service")
AnyEnv = Environment | MultiPlayerEnvironment


def encode_json(data: Any) -> bytes:
    """JSON bytes of an answer; an env's non-JSON value is the env's fault, said so in a 500.

    A string with a lone surrogate (an env that built text from raw bytes, say) is not valid UTF-8
    and orjson refuses it: such characters are sent as U+FFFD, so that the answer can still be sent
    and stored for a retried request.
    """
    try:
        return orjson.dumps(data, option=orjson.OPT_SERIALIZE_NUMPY)
    except TypeError as exc:
        if "surrogates" in str(exc):
            return encode_json(_without_surrogates(data))
        raise ServiceError(
            500,
            "env_contract",
            f"the environment returned something that is not JSON-serializable ({exc}); "
            "observations must be str and info values plain JSON types",
        ) from None


_SURROGATE = re.compile("[\ud800-\udfff]")


def _without_surrogates(data: Any) -> Any:
    if isinstance(data, str):
        return _SURROGATE.sub("\ufffd", data)
    if isinstance(data, dict):
        return {_without_surrogates(k): _without_surrogates(v) for k, v in data.items()}
    if isinstance(data, list | tuple):
        return [_without_surrogates(v) for v in data]
    return data


class EnvService:
    """The spec, the session table, where env code runs, and metrics, for one app."""

    def __init__(self, spec: EnvSpec, settings: ServiceSettings) -> None:
        self.spec = spec
        self.settings = settings
        self.info: EnvInfo = spec.info()
        self.players = self.info.players
        """Seats per session; more than 1 makes every reset and step go through ``seats``."""
        self.splits = spec.resolved_splits()
        self.default_split = next(iter(self.splits))
        self.table = SessionTable(
            max_sessions=settings.max_sessions, ttl_s=settings.ttl, remembered_replies=settings.remembered_replies
        )
        self.metrics = ServiceMetrics(spec.name)
        inline = spec.inline_calls if settings.inline_calls is None else settings.inline_calls
        self.calls = EnvCalls(
            spec.name,
            threads=settings.threads,
            timeout_s=settings.step_timeout,
            inline=inline,
            inline_budget_s=settings.inline_budget_ms / 1000,
        )
        self.idle_envs: list[AnyEnv] = []
        self._task_rng = random.Random()
        self._reaper: asyncio.Task[None] | None = None

    # -- environment instances -----------------------------------------------------

    async def new_env(self) -> AnyEnv:
        if self.idle_envs:
            return self.idle_envs.pop()
        return await self.calls.run("make", self.spec.make, **self.settings.env_kwargs)

    async def retire_env(self, env: AnyEnv, *, reusable: bool) -> None:
        """Keep a healthy instance for the next session, or close it."""
        if reusable and len(self.idle_envs) < self.settings.idle_envs:
            self.idle_envs.append(env)
            return
        try:
            await self.calls.run("close", env.close)
        except Exception:  # closing must never fail a request
            log.exception("closing an environment instance failed")

    async def end_session(self, session: Session, reason: str) -> None:
        async with session.lock:
            await self.retire_env(session.env, reusable=session.failure is None)
        self.metrics.sessions_closed.labels(reason=reason).inc()
        self.metrics.sessions_active.set(len(self.table))

    # -- task selection ----------------------------------------------------------------

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

    async def reset_env(
        self, env: AnyEnv, task_id: Any, seed: int | None, options: dict[str, Any]
    ) -> tuple[str, dict[str, Any], int | None]:
        """The first observation, info and (multi-player envs only) the seat on turn."""
        try:
            result = await self.calls.run("reset", env.reset, task_id=task_id, seed=seed, options=options)
        except ValueError as exc:
            raise ServiceError(422, "invalid_reset", f"the environment refused the reset: {exc}") from None
        if self.players > 1:
            return seat_reset(result, self.players)
        observation, info = result
        if not isinstance(observation, str) or not isinstance(info, dict):
            raise ServiceError(
                500, "env_contract", "the environment's reset must return (observation: str, info: dict)"
            )
        return observation, info, None

    # -- the protocol's session operations -----------------------------------------------

    async def create_session(self, body: CreateSessionRequest) -> bytes:
        """``POST /v1/sessions``: a new session, reset on its task; the 201 answer's JSON.

        The answer is encoded before the session is added, so that an answer that cannot be
        sent never leaves a session behind that its client does not know of.
        """
        task_id = self.choose_task(body.task_id, body.split, body.seed)
        self.table.reserve()
        env: AnyEnv | None = None
        session_id = new_session_id()
        try:
            env = await self.new_env()
            observation, reset_info, seat = await self.reset_env(env, task_id, body.seed, body.options)
            created = {"session_id": session_id, "task_id": task_id, "observation": observation, "info": reset_info}
            if seat is not None:
                created["seat"] = seat
            answer = encode_json(created)
        except BaseException as exc:
            self.table.release_reservation()
            if env is not None:
                await self.retire_env(env, reusable=isinstance(exc, ServiceError) and exc.status == 422)
            raise
        session = Session(env=env, task_id=task_id, id=session_id, seat=seat)
        self.table.add(session)
        self.metrics.sessions_created.inc()
        self.metrics.sessions_active.set(len(self.table))
        return answer

    async def reset_session(self, session_id: str, body: ResetRequest) -> bytes:
        """``POST .../reset``: the answer's JSON, encoded under the session's lock (see ``step_session``)."""
        session = self.table.get(session_id)
        async with session.lock:
            _refuse_if_failed(session)
            task_id = session.task_id if body.task_id is None else self.choose_task(body.task_id, None, None)
            observation, reset_info, seat = await _guard(
                session, self.reset_env(session.env, task_id, body.seed, body.options)
            )
            session.task_id = task_id
            session.turns = 0
            session.done = False
            session.seat = seat
            session.replies.clear()
            session.touch()
            reset: dict[str, Any] = {"observation": observation, "info": reset_info}
            if seat is not None:
                reset["seat"] = seat
            answer: bytes = await _guard(session, _encoded(reset))
        return answer

    async def step_session(self, session_id: str, body: StepRequest) -> tuple[bytes, bool]:
        """``POST .../step``: the answer's JSON, and whether it is the stored answer of a retried request id.

        The answer is encoded under the session's lock, before it is stored for its request id: a
        step that was applied always has an answer that can be sent and replayed, or, if the env
        returned something that is not JSON, the session is failed and says so.
        """
        session = self.table.get(session_id)
        async with session.lock:
            # A seat the env's document rules out is refused even on a retried request id (422, not a replay).
            check_seat_fits(body.seat, self.players, session.seat if not session.done else None)
            if body.request_id is not None and body.request_id in session.replies:
                session.touch()
                return session.replies[body.request_id], True
            _refuse_if_failed(session)
            check_seat(body.seat, self.players, session.seat if not session.done else None)
            if session.done:
                raise ServiceError(
                    409,
                    "episode_done",
                    f"the episode in session {session_id!r} has ended; reset it "
                    f"(POST /v1/sessions/{session_id}/reset) or create a new session",
                )
            started = time.perf_counter()
            reply = await _guard(session, self._apply_step(session, body))
            self.metrics.step_seconds.observe(time.perf_counter() - started)
            session.turns += 1
            session.done = reply["terminated"] or reply["truncated"]
            session.seat = reply.get("seat")
            answer: bytes = await _guard(session, _encoded(reply))
            if body.request_id is not None:
                session.remember(body.request_id, answer, self.table.remembered_replies)
            session.touch()
            self.metrics.steps.inc()
        return answer, False

    async def close_session(self, session_id: str) -> None:
        await self.end_session(self.table.pop(session_id), "closed")

    async def _apply_step(self, session: Session, body: StepRequest) -> dict[str, Any]:
        # Before the env: none of its parsers ever reads more than it declared it takes.
        refused = too_long_reply(body.action, self.spec.max_action_chars, body.seat, self.players)
        if refused is not None:
            return refused
        if self.players > 1:
            assert body.seat is not None  # check_seat refused a step without one
            result = await self.calls.run("step", session.env.step, body.seat, body.action)
            return seat_reply(result, body.seat, self.players)
        return _step_reply(await self.calls.run("step", session.env.step, body.action))

    # -- life cycle ------------------------------------------------------------------------

    async def reap_forever(self) -> None:
        interval = max(0.05, min(self.settings.ttl / 4, 30.0))
        while True:
            await asyncio.sleep(interval)
            for session in self.table.pop_expired():
                await self.end_session(session, "expired")

    async def start(self) -> None:
        self._reaper = asyncio.create_task(self.reap_forever())
        if "make" in self.calls.inline:
            await self._warm_up()

    async def _warm_up(self) -> None:
        """Build a first instance in the pool, so that imports and one-time loading stay off the loop."""
        try:
            env = await self.calls.run_in_pool(self.spec.make, **self.settings.env_kwargs)
        except Exception:
            # Not fatal here: every create will answer the same failure to its client, in words.
            log.exception("agenthub: building a first %s instance at startup failed", self.spec.name)
            return
        await self.retire_env(env, reusable=True)

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
                await self.calls.run("close", env.close)
        self.idle_envs.clear()
        self.calls.shutdown()
        log.info("agenthub: %s server stopped; closed %d sessions", self.spec.name, len(sessions))


async def _encoded(data: Any) -> bytes:
    """``encode_json`` as an awaitable, for ``_guard``: an answer the env made unencodable fails its session."""
    return encode_json(data)


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
