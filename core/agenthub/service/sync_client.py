"""The blocking client of protocol v1: :class:`SyncEnvClient`, the async client driven from a loop thread."""

from __future__ import annotations

from collections.abc import Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Any

import httpx

from agenthub.service.async_client import EnvClient, RemoteSession
from agenthub.service.loop_thread import LoopThread
from agenthub.types import Action, EnvInfo, ResetResult, SessionState, StepResult, TaskId, TaskList

if TYPE_CHECKING:
    from agenthub.gymnasium.remote_env import RemoteGymEnv


class SyncEnvClient:
    """The blocking twin of :class:`EnvClient`, with the same methods and retries."""

    def __init__(self, base_url: str, *, transport: httpx.AsyncBaseTransport | None = None, **kwargs: Any) -> None:
        self._loop = LoopThread("agenthub-client")
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

    def step(
        self, session_id: str, action: Action, *, request_id: str | None = None, seat: int | None = None
    ) -> StepResult:
        return self._loop.run(self._client.step(session_id, action, request_id=request_id, seat=seat))

    def session_state(self, session_id: str) -> SessionState:
        return self._loop.run(self._client.session_state(session_id))

    def close_session(self, session_id: str) -> None:
        self._loop.run(self._client.close_session(session_id))

    def as_gym(self, **kwargs: Any) -> RemoteGymEnv:
        from agenthub.gymnasium.remote_env import RemoteGymEnv

        return RemoteGymEnv(self, owns_client=False, **kwargs)
