"""Clients for protocol v1: async ``EnvClient`` on httpx, and ``SyncEnvClient`` around it.

Retries: connection failures, dropped connections, 429 and 503 are retried
with exponential backoff (honouring ``Retry-After``). Steps carry a request id,
reused across retries, so the server never applies a retried action twice.
A request that was never sent (connection refused) is always safe to retry.
"""

from __future__ import annotations

import asyncio
import random
import threading
import uuid
from collections.abc import Coroutine, Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

import httpx

from agenthub.errors import (
    EnvServerUnavailableError,
    EnvServiceError,
    EpisodeDoneError,
    ServerBusyError,
    SessionNotFoundError,
)
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
    from agenthub.service.gym_adapter import RemoteGymEnv

T = TypeVar("T")
_RETRY_STATUSES = frozenset({429, 503})
_MAX_RETRY_AFTER_S = 10.0


def _error_from(response: httpx.Response) -> EnvServiceError:
    try:
        detail = response.json()["error"]
        code, message = str(detail["code"]), str(detail["message"])
    except Exception:
        code, message = "http_error", response.text[:500] or response.reason_phrase
    url = str(response.request.url) if response.request is not None else ""
    cls: type[EnvServiceError] = EnvServiceError
    if response.status_code == 404 and code == "session_not_found":
        cls = SessionNotFoundError
    elif response.status_code == 409 and code == "episode_done":
        cls = EpisodeDoneError
    elif response.status_code in _RETRY_STATUSES:
        cls = ServerBusyError
    return cls(response.status_code, code, message, url)


def _action_json(action: Action) -> str | dict[str, Any]:
    return action.model_dump() if isinstance(action, ToolCall) else action


class EnvClient:
    """Async client of one environment server.

    Example::

        async with EnvClient("http://127.0.0.1:8000") as client:
            session = await client.create_session(task_id=3)
            result = await session.step("guess 8")
            await session.close()
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
        self._http = httpx.AsyncClient(
            base_url=self.base_url,
            headers=headers,
            timeout=httpx.Timeout(timeout, connect=connect_timeout),
            limits=httpx.Limits(max_connections=max_connections, max_keepalive_connections=max_connections),
            transport=transport,
        )

    async def __aenter__(self) -> EnvClient:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    # -- transport with retries ---------------------------------------------------

    async def _request(
        self, method: str, path: str, *, json: Any = None, params: Any = None, idempotent: bool
    ) -> httpx.Response:
        attempt = 0
        while True:
            try:
                response = await self._http.request(method, path, json=json, params=params)
            except httpx.ConnectError as exc:  # never reached the server: always safe to retry
                error: Exception = exc
            except (httpx.TransportError, httpx.TimeoutException) as exc:
                if not idempotent:
                    raise EnvServerUnavailableError(
                        f"{method} {self.base_url}{path} failed ({type(exc).__name__}: {exc}) and is not safe to retry"
                    ) from exc
                error = exc
            else:
                if response.status_code < 400:
                    return response
                if response.status_code not in _RETRY_STATUSES or attempt >= self.retries:
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
                    f"{method} {self.base_url}{path} failed after {attempt + 1} attempts "
                    f"({type(error).__name__}: {error}); is the environment server running?"
                ) from error
            await asyncio.sleep(self._backoff(attempt))
            attempt += 1

    def _backoff(self, attempt: int) -> float:
        return float(self.backoff_s * (2**attempt) * (0.5 + random.random()))

    @staticmethod
    def _retry_after(response: httpx.Response) -> float | None:
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
        body = {"task_id": task_id, "split": split, "seed": seed, "options": dict(options or {})}
        response = await self._request("POST", "/v1/sessions", json=body, idempotent=False)
        data = response.json()
        first = ResetResult(observation=data["observation"], info=data.get("info", {}))
        return RemoteSession(self, data["session_id"], data.get("task_id", task_id), first)

    async def reset(
        self,
        session_id: str,
        task_id: TaskId | None = None,
        *,
        seed: int | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> ResetResult:
        body = {"task_id": task_id, "seed": seed, "options": dict(options or {})}
        response = await self._request("POST", f"/v1/sessions/{session_id}/reset", json=body, idempotent=True)
        return ResetResult.model_validate_json(response.content)

    async def step(self, session_id: str, action: Action, *, request_id: str | None = None) -> StepResult:
        body = {"action": _action_json(action), "request_id": request_id or uuid.uuid4().hex}
        response = await self._request("POST", f"/v1/sessions/{session_id}/step", json=body, idempotent=True)
        return StepResult.model_validate_json(response.content)

    async def session_state(self, session_id: str) -> SessionState:
        response = await self._request("GET", f"/v1/sessions/{session_id}", idempotent=True)
        return SessionState.model_validate_json(response.content)

    async def close_session(self, session_id: str) -> None:
        """Close a session; closing one that is already gone is not an error."""
        try:
            await self._request("DELETE", f"/v1/sessions/{session_id}", idempotent=True)
        except SessionNotFoundError:
            return

    def as_gym(self, **kwargs: Any) -> RemoteGymEnv:
        """A ``gymnasium.Env`` over this server (the gym API is synchronous: it gets its own sync client)."""
        from agenthub.service.gym_adapter import RemoteGymEnv

        sync = SyncEnvClient(self.base_url, token=self.token, retries=self.retries, transport=self.transport)
        return RemoteGymEnv(sync, owns_client=True, **kwargs)


class RemoteSession:
    """A handle on one server-side session."""

    def __init__(self, client: EnvClient, session_id: str, task_id: TaskId | None, first: ResetResult) -> None:
        self.client = client
        self.id = session_id
        self.task_id = task_id
        self.observation = first.observation
        self.info = first.info

    async def step(self, action: Action, *, request_id: str | None = None) -> StepResult:
        return await self.client.step(self.id, action, request_id=request_id)

    async def reset(
        self, task_id: TaskId | None = None, *, seed: int | None = None, options: Mapping[str, Any] | None = None
    ) -> ResetResult:
        result = await self.client.reset(self.id, task_id, seed=seed, options=options)
        if task_id is not None:
            self.task_id = task_id
        return result

    async def state(self) -> SessionState:
        return await self.client.session_state(self.id)

    async def close(self) -> None:
        await self.client.close_session(self.id)

    async def __aenter__(self) -> RemoteSession:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()


class _LoopThread:
    """A private event loop in a daemon thread, so sync code can drive the async client anywhere
    (also inside Jupyter, where a loop is already running on the main thread)."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="agenthub-client", daemon=True)
        self.thread.start()

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()

    def stop(self) -> None:
        if self.loop.is_running():
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(timeout=5)
        if not self.loop.is_running():
            self.loop.close()


class SyncEnvClient:
    """The blocking twin of :class:`EnvClient`, with the same methods and retries."""

    def __init__(self, base_url: str, *, transport: httpx.AsyncBaseTransport | None = None, **kwargs: Any) -> None:
        self._loop = _LoopThread()
        self._client = self._loop.run(self._make(base_url, transport, kwargs))
        self.base_url = self._client.base_url

    @staticmethod
    async def _make(base_url: str, transport: httpx.AsyncBaseTransport | None, kwargs: dict[str, Any]) -> EnvClient:
        return EnvClient(base_url, transport=transport, **kwargs)

    def __enter__(self) -> SyncEnvClient:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        if self._loop.loop.is_closed():
            return
        self._loop.run(self._client.aclose())
        self._loop.stop()

    def health(self) -> dict[str, Any]:
        return self._loop.run(self._client.health())

    def info(self) -> EnvInfo:
        return self._loop.run(self._client.info())

    def tasks(self, split: str | None = None) -> TaskList:
        return self._loop.run(self._client.tasks(split))

    def create_session(
        self,
        task_id: TaskId | None = None,
        *,
        split: str | None = None,
        seed: int | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> RemoteSession:
        """Returns the async session handle; drive it with this client's ``step``/``reset``/``close_session``."""
        return self._loop.run(self._client.create_session(task_id, split=split, seed=seed, options=options))

    def reset(
        self,
        session_id: str,
        task_id: TaskId | None = None,
        *,
        seed: int | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> ResetResult:
        return self._loop.run(self._client.reset(session_id, task_id, seed=seed, options=options))

    def step(self, session_id: str, action: Action, *, request_id: str | None = None) -> StepResult:
        return self._loop.run(self._client.step(session_id, action, request_id=request_id))

    def session_state(self, session_id: str) -> SessionState:
        return self._loop.run(self._client.session_state(session_id))

    def close_session(self, session_id: str) -> None:
        self._loop.run(self._client.close_session(session_id))

    def as_gym(self, **kwargs: Any) -> RemoteGymEnv:
        from agenthub.service.gym_adapter import RemoteGymEnv

        return RemoteGymEnv(self, owns_client=False, **kwargs)
