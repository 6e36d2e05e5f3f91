"""Env sessions driven turn by turn by swift's per-turn hooks (colocate and transformers mode).

swift runs ``on_trajectory_start`` in a throw-away event loop and the turn
hooks in another one per rollout, so connections opened in either would die
with it. The sessions live on an event loop of their own, in a daemon
thread, and the hooks hand their calls over to it: env connections and the
pool's health checks last the whole training run.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Coroutine
from dataclasses import dataclass, field
from typing import Any, TypeVar

from agenthub import (
    EnvInfo,
    EnvServerUnavailableError,
    EnvServiceError,
    Outcome,
    RemoteSession,
    StepResult,
    Task,
    Trajectory,
    Turn,
)
from agenthub import __version__ as agenthub_version
from agenthub.rollout import EnvPool, EpisodeFailure, NoHealthyEndpointError, env_failure

from agenthub_trainer_swift.settings import SchedulerSettings

T = TypeVar("T")


class LoopThread:
    """An event loop running forever in a daemon thread; ``await call(coro)`` runs ``coro`` there."""

    def __init__(self, name: str = "agenthub-swift-envs") -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name=name, daemon=True)
        self._thread.start()

    async def call(self, coro: Coroutine[Any, Any, T]) -> T:
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, self.loop))

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """From a thread with no running loop."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=5)


def classify(exc: BaseException, *, during: str) -> EpisodeFailure:
    """The outcome an env call's exception gives the episode.

    The env's errors follow core's one rule (:func:`agenthub.rollout.env_failure`), as every
    other trainer's episodes do; what only swift's hooks meet is handled here: its own episode
    timeout (a plain :class:`TimeoutError`) ends the episode as ``timeout``, anything else as
    ``env_error``."""
    if isinstance(exc, (EnvServiceError, EnvServerUnavailableError)):
        return env_failure(exc, during=during)
    if isinstance(exc, TimeoutError):
        return EpisodeFailure(Outcome.TIMEOUT, f"{during}: timed out", retry=True)
    return EpisodeFailure(Outcome.ENV_ERROR, f"{during}: {type(exc).__name__}: {exc}", retry=False)


@dataclass
class TurnEpisode:
    """One episode's env side while swift samples its turns."""

    key: str
    task: Task
    max_turns: int
    system_prompt: str | None = None
    first_observation: str = ""
    session: RemoteSession | None = None
    turns: list[Turn] = field(default_factory=list)
    outcome: Outcome | None = None
    error: str | None = None
    pending_observation: str | None = None
    endpoint: str = ""
    started: float = field(default_factory=time.monotonic)
    stack: contextlib.AsyncExitStack = field(default_factory=contextlib.AsyncExitStack)

    @property
    def failed(self) -> bool:
        return self.outcome is not None and self.outcome.is_infra_failure

    @property
    def reward(self) -> float:
        return sum(t.reward for t in self.turns)

    def fail(self, failure: EpisodeFailure) -> None:
        self.outcome, self.error = failure.outcome, str(failure)

    def trajectory(self, info: EnvInfo | None) -> Trajectory:
        return Trajectory(
            task=self.task,
            first_observation=self.first_observation,
            turns=self.turns,
            reward=self.reward,
            outcome=self.outcome or Outcome.TRUNCATED,
            error=self.error,
            provenance={
                "agenthub_version": agenthub_version,
                "env": info.name if info else None,
                "env_version": info.version if info else None,
                "task_id": self.task.task_id,
                "split": self.task.split,
                "max_turns": self.max_turns,
                "endpoint": self.endpoint,
                "policy": "swift-colocate",
            },
            key=self.key,
            duration_s=round(time.monotonic() - self.started, 6),
        )


class EnvSessions:
    """Opens, steps and closes env sessions for swift's hooks; every call runs on :class:`LoopThread`."""

    def __init__(self, settings: SchedulerSettings, *, cap: int | None = None) -> None:
        self.settings = settings
        self.cap = cap  # swift's --max_turns: it stops there, so the session must end there too
        self.thread = LoopThread()
        self._pool: EnvPool | None = None
        self.info: EnvInfo | None = None

    async def _ready_pool(self) -> EnvPool:
        if self._pool is None:
            s = self.settings
            pool = EnvPool.from_urls(s.urls, token=s.token, capacity=s.capacity)
            pool.start()
            self.info = await pool.info()
            if self.info.name != s.env:
                await pool.close()
                raise RuntimeError(
                    f"the env servers at {', '.join(s.urls)} serve {self.info.name!r}, not {s.env!r}; "
                    "fix urls or env in the agenthub scheduler settings"
                )
            self._pool = pool
        return self._pool

    async def open(self, key: str, task: Task) -> TurnEpisode:
        return await self.thread.call(self._open(key, task))

    async def step(self, episode: TurnEpisode, action: str) -> StepResult:
        return await self.thread.call(self._step(episode, action))

    async def close(self, episode: TurnEpisode) -> None:
        await self.thread.call(episode.stack.aclose())

    async def _open(self, key: str, task: Task) -> TurnEpisode:
        """Create the session (a fresh one per try on infra failures); a failed episode is returned marked."""
        pool = await self._ready_pool()
        assert self.info is not None
        limit = self.settings.max_turns or task.max_turns or self.info.default_max_turns
        if self.cap:
            limit = min(limit, self.cap)
        episode = TurnEpisode(
            key=key,
            task=task,
            max_turns=limit,
            system_prompt=self.settings.system_prompt or self.info.instructions,
        )
        for attempt in range(1, self.settings.max_attempts + 1):
            try:
                endpoint = await episode.stack.enter_async_context(pool.slot())
                episode.endpoint = endpoint.url
                session = await endpoint.client.create_session(
                    task.task_id, split=task.split, seed=task.seed, options=task.options
                )
            except (EnvServiceError, EnvServerUnavailableError, NoHealthyEndpointError, TimeoutError) as exc:
                await episode.stack.aclose()
                episode.stack = contextlib.AsyncExitStack()
                failure = classify(exc, during=f"create session (attempt {attempt})")
                episode.fail(failure)
                if not failure.retry:  # the request itself was refused: a fresh session would be too
                    break
                continue
            episode.stack.push_async_callback(_close_quietly, session)
            episode.session, episode.outcome, episode.error = session, None, None
            episode.first_observation = session.observation
            episode.task = task.model_copy(update={"task_id": session.task_id, "max_turns": limit})
            break
        return episode

    async def _step(self, episode: TurnEpisode, action: str) -> StepResult:
        assert episode.session is not None, "step() on an episode without a session"
        timeout = self.settings.episode_timeout_s
        remaining = None if timeout is None else max(0.001, timeout - (time.monotonic() - episode.started))
        try:
            async with asyncio.timeout(remaining):
                return await episode.session.step(action)  # the client retries with the same request id
        except (EnvServiceError, EnvServerUnavailableError, TimeoutError) as exc:
            raise classify(exc, during="step") from exc

    def shutdown(self) -> None:
        if self._pool is not None:
            with contextlib.suppress(Exception):
                self.thread.run(self._pool.close())
        self.thread.stop()


async def _close_quietly(session: RemoteSession) -> None:
    with contextlib.suppress(EnvServiceError, EnvServerUnavailableError):
        await session.close()
