"""The async client of protocol v1: :class:`EnvClient`, and :class:`RemoteSession`, a handle on one session.

Retries: connection failures, dropped connections, 429 and 503 are retried
with exponential backoff (honouring ``Retry-After``). Steps carry a request id,
reused across retries, so the server never applies a retried action twice.
A request that was never sent (connection refused) is always safe to retry.

Sticky sessions: a server that advertises its own address (``advertise_url``, e.g. a pod IP behind a
Kubernetes Service) names it in the ``Location`` header of a create answer; the client then sends that
session's reset, step, state and close to that address, not through the load-balanced one
(``agenthub.service.routing``).

How a request travels (aiohttp, or an httpx transport) is :mod:`agenthub.service.transports`.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import secrets
from collections.abc import Mapping
from contextlib import AbstractAsyncContextManager
from types import TracebackType
from typing import TYPE_CHECKING, Any

import httpx
import orjson

from agenthub.errors import (
    EnvServerUnavailableError,
    EnvServiceError,
    EpisodeDoneError,
    ServerBusyError,
    SessionNotFoundError,
)
from agenthub.service.routing import session_base_url
from agenthub.service.transports import AiohttpTransport, Answer, HttpxTransport, Transport, TransportFailure
from agenthub.types import (
    Action,
    EnvInfo,
    ResetResult,
    SessionState,
    StepResult,
    TaskId,
    TaskList,
    ToolCall,
)

if TYPE_CHECKING:
    from agenthub.gymnasium.remote_env import RemoteGymEnv

_RETRY_STATUSES = frozenset({429, 503})
_MAX_RETRY_AFTER_S = 10.0
# How long a cancelled create waits for the server's answer, to close the session it made.
_CANCELLED_CREATE_GRACE_S = 5.0


def _error_from(response: Answer) -> EnvServiceError:
    try:
        detail = response.json()["error"]
        code, message = str(detail["code"]), str(detail["message"])
    except Exception:
        code, message = "http_error", response.text[:500] or response.reason
    cls: type[EnvServiceError] = EnvServiceError
    if response.status == 404 and code == "session_not_found":
        cls = SessionNotFoundError
    elif response.status == 409 and code == "episode_done":
        cls = EpisodeDoneError
    elif response.status in _RETRY_STATUSES:
        cls = ServerBusyError
    return cls(response.status, code, message, response.url)


def _action_json(action: Action) -> str | dict[str, Any]:
    return action.model_dump() if isinstance(action, ToolCall) else action


class EnvClient(AbstractAsyncContextManager["EnvClient", None]):
    """Async client of one environment server.

    Example::

        async with EnvClient("http://127.0.0.1:8000") as client:
            session = await client.create_session(task_id=3)
            result = await session.step("guess 8")
            await session.close()

    Requests go over pooled aiohttp connections, bound to the event loop that
    makes the first request; with ``transport`` (an httpx transport, such as
    ``httpx.ASGITransport(app)``) they go through httpx instead.
    """

    def __init__(
        self,
        base_url: str,
        *,
        token: str | None = None,
        timeout: float = 60.0,
        connect_timeout: float = 5.0,
        retries: int = 3,
        backoff_s: float = 0.2,
        max_connections: int = 256,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        if retries < 0:
            raise ValueError(f"retries must be >= 0, got {retries}")
        self.base_url = base_url.rstrip("/")
        self.token = token
        self.transport = transport
        self.retries = retries
        self.backoff_s = backoff_s
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self._session_bases: dict[str, str] = {}
        """Sessions whose server named another address at create (sticky routing), by session id."""
        self._http: Transport
        if transport is None:
            self._http = AiohttpTransport(headers, timeout, connect_timeout, max_connections)
        else:
            self._http = HttpxTransport(transport, headers, timeout, connect_timeout)

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    # -- transport with retries ---------------------------------------------------

    async def _request(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        params: Mapping[str, str] | None = None,
        idempotent: bool,
        base_url: str | None = None,
    ) -> Answer:
        url = (base_url or self.base_url) + path
        body = None if json is None else orjson.dumps(json)
        attempt = 0
        while True:
            try:
                response = await self._http.send(method, url, body, params)
            except TransportFailure as exc:
                if exc.sent and not idempotent:
                    raise EnvServerUnavailableError(
                        f"{method} {url} failed ({exc}) and is not safe to retry; "
                        "check the environment server's log for a crash or a restart"
                    ) from exc
                error: Exception = exc
            else:
                if response.status < 400:
                    return response
                if response.status not in _RETRY_STATUSES or attempt >= self.retries:
                    raise _error_from(response)
                error = _error_from(response)
                delay = self._retry_after(response)
                if delay is not None:
                    attempt += 1
                    await asyncio.sleep(delay)
                    continue
            if attempt >= self.retries:
                if isinstance(error, EnvServiceError):
                    raise error
                raise EnvServerUnavailableError(
                    f"{method} {url} failed after {attempt + 1} attempts ({error}); is the environment server running?"
                ) from error
            await asyncio.sleep(self._backoff(attempt))
            attempt += 1

    def _backoff(self, attempt: int) -> float:
        return float(self.backoff_s * (2**attempt) * (0.5 + random.random()))

    @staticmethod
    def _retry_after(response: Answer) -> float | None:
        value = response.headers.get("Retry-After")
        try:
            return min(_MAX_RETRY_AFTER_S, float(value)) if value is not None else None
        except ValueError:
            return None

    # -- protocol v1 -----------------------------------------------------------------

    async def health(self) -> dict[str, Any]:
        response = await self._request("GET", "/healthz", idempotent=True)
        return dict(response.json())

    async def info(self) -> EnvInfo:
        return EnvInfo.model_validate_json((await self._request("GET", "/v1/info", idempotent=True)).content)

    async def tasks(self, split: str | None = None) -> TaskList:
        params = {"split": split} if split is not None else None
        response = await self._request("GET", "/v1/tasks", params=params, idempotent=True)
        return TaskList.model_validate_json(response.content)

    async def create_session(
        self,
        task_id: TaskId | None = None,
        *,
        split: str | None = None,
        seed: int | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> RemoteSession:
        """A new session. Cancelled while the server builds it, the create still closes what it made.

        Otherwise a create cancelled in flight (an episode timeout, a consumer that stopped early) leaves
        a session on the server that nobody will close: it holds one of the server's ``max_sessions``
        until its TTL, and a server sized to its pool's concurrency then answers every new create 503.
        """
        body = {"task_id": task_id, "split": split, "seed": seed, "options": dict(options or {})}
        creating = asyncio.ensure_future(self._create(body, task_id))
        try:
            return await asyncio.shield(creating)
        except asyncio.CancelledError:
            await self._close_once_created(creating)
            raise

    async def _close_once_created(self, creating: asyncio.Future[RemoteSession]) -> None:
        try:
            session = await asyncio.wait_for(creating, timeout=_CANCELLED_CREATE_GRACE_S)
        except Exception:  # refused, unreachable or too slow: nothing to close here (the TTL reaps the last)
            return
        with contextlib.suppress(EnvServiceError, EnvServerUnavailableError):
            await session.close()

    async def _create(self, body: dict[str, Any], task_id: TaskId | None) -> RemoteSession:
        response = await self._request("POST", "/v1/sessions", json=body, idempotent=False)
        data = response.json()
        session_id = data["session_id"]
        base = session_base_url(response.headers.get("Location"), session_id)
        if base is not None and base != self.base_url:
            self._session_bases[session_id] = base
        first = ResetResult(observation=data["observation"], info=data.get("info", {}), seat=data.get("seat"))
        return RemoteSession(self, session_id, data.get("task_id", task_id), first)

    def session_url(self, session_id: str) -> str:
        """Where ``session_id``'s calls go: the server its create answer named, else ``base_url``."""
        return self._session_bases.get(session_id, self.base_url)

    async def reset(
        self,
        session_id: str,
        task_id: TaskId | None = None,
        *,
        seed: int | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> ResetResult:
        body = {"task_id": task_id, "seed": seed, "options": dict(options or {})}
        path, base = f"/v1/sessions/{session_id}/reset", self.session_url(session_id)
        response = await self._request("POST", path, json=body, idempotent=True, base_url=base)
        return ResetResult.model_validate_json(response.content)

    async def step(
        self, session_id: str, action: Action, *, request_id: str | None = None, seat: int | None = None
    ) -> StepResult:
        """One step; ``seat`` is the acting seat, required by a multi-player env and refused by others."""
        body: dict[str, Any] = {"action": _action_json(action), "request_id": request_id or secrets.token_hex(16)}
        if seat is not None:
            body["seat"] = seat
        path, base = f"/v1/sessions/{session_id}/step", self.session_url(session_id)
        response = await self._request("POST", path, json=body, idempotent=True, base_url=base)
        return StepResult.model_validate_json(response.content)

    async def session_state(self, session_id: str) -> SessionState:
        response = await self._request(
            "GET", f"/v1/sessions/{session_id}", idempotent=True, base_url=self.session_url(session_id)
        )
        return SessionState.model_validate_json(response.content)

    async def close_session(self, session_id: str) -> None:
        """Close a session; closing one that is already gone is not an error."""
        try:
            await self._request(
                "DELETE", f"/v1/sessions/{session_id}", idempotent=True, base_url=self.session_url(session_id)
            )
        except SessionNotFoundError:
            pass
        finally:
            self._session_bases.pop(session_id, None)

    def as_gym(self, **kwargs: Any) -> RemoteGymEnv:
        """A ``gymnasium.Env`` over this server (the gym API is synchronous: it gets its own sync client)."""
        from agenthub.gymnasium.remote_env import RemoteGymEnv
        from agenthub.service.sync_client import SyncEnvClient  # it wraps this module's client

        sync = SyncEnvClient(self.base_url, token=self.token, retries=self.retries, transport=self.transport)
        return RemoteGymEnv(sync, owns_client=True, **kwargs)


class RemoteSession(AbstractAsyncContextManager["RemoteSession", None]):
    """A handle on one server-side session."""

    def __init__(self, client: EnvClient, session_id: str, task_id: TaskId | None, first: ResetResult) -> None:
        self.client = client
        self.id = session_id
        self.task_id = task_id
        self.observation = first.observation
        self.info = first.info
        self.seat = first.seat
        """Multi-player envs: the seat on turn after the create; None for a single-player env."""

    async def step(self, action: Action, *, request_id: str | None = None, seat: int | None = None) -> StepResult:
        """One step; on a multi-player env ``seat`` defaults to the seat on turn (``self.seat``)."""
        result = await self.client.step(
            self.id, action, request_id=request_id, seat=self.seat if seat is None else seat
        )
        self.seat = result.seat
        return result

    async def reset(
        self, task_id: TaskId | None = None, *, seed: int | None = None, options: Mapping[str, Any] | None = None
    ) -> ResetResult:
        result = await self.client.reset(self.id, task_id, seed=seed, options=options)
        if task_id is not None:
            self.task_id = task_id
        self.seat = result.seat
        return result

    async def state(self) -> SessionState:
        return await self.client.session_state(self.id)

    async def close(self) -> None:
        await self.client.close_session(self.id)

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()
