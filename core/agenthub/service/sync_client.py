"""The blocking client of protocol v1: :class:`SyncEnvClient`, the async client driven from a loop thread."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Coroutine
from types import TracebackType
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar

import httpx

from agenthub.service.async_client import EnvClient
from agenthub.service.loop_thread import LoopThread

if TYPE_CHECKING:
    from agenthub.gymnasium.remote_env import RemoteGymEnv

P = ParamSpec("P")
T = TypeVar("T")


def _blocking(
    method: Callable[Concatenate[EnvClient, P], Coroutine[Any, Any, T]], *, doc: str | None = None
) -> Callable[Concatenate[SyncEnvClient, P], T]:
    """The blocking twin of the async client's ``method``: its very parameters (one signature for both
    clients), its coroutine run on the sync client's loop thread."""

    def blocking(self: SyncEnvClient, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return self._loop.run(method(self._client, *args, **kwargs))

    blocking.__name__ = method.__name__
    blocking.__qualname__ = f"SyncEnvClient.{method.__name__}"
    blocking.__doc__ = doc or method.__doc__
    blocking.__signature__ = inspect.signature(method)  # type: ignore[attr-defined]  # help() shows the parameters
    return blocking


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

    health = _blocking(EnvClient.health)
    info = _blocking(EnvClient.info)
    tasks = _blocking(EnvClient.tasks)
    create_session = _blocking(
        EnvClient.create_session,
        doc="Returns the async session handle; drive it with this client's ``step``/``reset``/``close_session``.",
    )
    reset = _blocking(EnvClient.reset)
    step = _blocking(EnvClient.step)
    session_state = _blocking(EnvClient.session_state)
    close_session = _blocking(EnvClient.close_session)

    def as_gym(self, **kwargs: Any) -> RemoteGymEnv:
        from agenthub.gymnasium.remote_env import RemoteGymEnv

        return RemoteGymEnv(self, owns_client=False, **kwargs)
