"""The hub executor: many episodes at once, each finishing on its own.

An episode holds a slot on one env endpoint, creates a session with its
task, lets the policy act until the env ends it or the horizon is reached,
and closes the session. Results stream out in the order episodes finish, so
a slow episode never holds back a fast one. Infra failures (a server that
died, a timeout) are retried on a fresh session; if they keep failing the
trajectory is kept, marked, and never carries made-up text.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import random
import time
from collections.abc import AsyncIterator, Callable, Container, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agenthub._version import __version__
from agenthub.errors import AgenthubError, EnvServerUnavailableError, EnvServiceError
from agenthub.protocols import Agent, AgentEpisode
from agenthub.rollout.pool import EnvPool, NoHealthyEndpointError
from agenthub.rollout.tokens import ContextLengthExceeded
from agenthub.service.client import RemoteSession
from agenthub.types import (
    PROTOCOL_VERSION,
    AgentReply,
    EnvInfo,
    Observation,
    Outcome,
    Task,
    TaskId,
    TokenTrace,
    Trajectory,
    Turn,
)

log = logging.getLogger("agenthub.executor")

TurnCallback = Callable[[str, int, Turn], None]
"""``on_turn(episode_key, turn_number, turn)``."""


@dataclass(frozen=True)
class EpisodeRequest:
    """One episode to run; ``key`` is unique within a run and is what resume skips."""

    key: str
    task: Task


def episode_requests(tasks: Sequence[Task], samples: int = 1) -> list[EpisodeRequest]:
    """``samples`` episodes of each task, keyed ``"<task index>/<sample>"``."""
    if samples < 1:
        raise AgenthubError(f"samples per task must be >= 1, got {samples}")
    return [EpisodeRequest(f"{i}/{k}", task) for i, task in enumerate(tasks) for k in range(samples)]


class _Failure(Exception):
    """Ends one attempt with an outcome; ``retry`` says whether a fresh session may help."""

    def __init__(self, outcome: Outcome, message: str, *, retry: bool) -> None:
        super().__init__(message)
        self.outcome = outcome
        self.retry = retry


def _env_failure(exc: Exception, *, during: str) -> _Failure:
    if isinstance(exc, EnvServerUnavailableError):
        return _Failure(Outcome.ENV_ERROR, f"{during}: {exc}", retry=True)
    assert isinstance(exc, EnvServiceError)
    if exc.status == 504:
        return _Failure(Outcome.TIMEOUT, f"{during}: {exc}", retry=True)
    if exc.status >= 500 or exc.status in (404, 409, 429, 503):  # crashed, restarted, expired, busy
        return _Failure(Outcome.ENV_ERROR, f"{during}: {exc}", retry=True)
    if during == "step":  # 400/413/422 on a step: the action itself was malformed
        return _Failure(Outcome.AGENT_ERROR, f"the env rejected the action: {exc}", retry=False)
    return _Failure(Outcome.ENV_ERROR, f"{during}: {exc}", retry=False)


class _BoundedEpisode:
    """An agent episode whose ``act`` waits for the policy endpoint's concurrency limit."""

    def __init__(self, episode: AgentEpisode, limit: asyncio.Semaphore) -> None:
        self.episode = episode
        self.limit = limit

    async def act(self, observation: Observation) -> AgentReply:
        async with self.limit:
            return await self.episode.act(observation)


class Executor:
    """Runs episodes of ``agent`` against the env servers of ``pool``.

    Example::

        async with await EnvPool.launch("textcraft", processes=2) as pool:
            executor = Executor(pool, agent, concurrency=64)
            async for trajectory in executor.stream(episode_requests(tasks, samples=8)):
                store.write(trajectory)
    """

    def __init__(
        self,
        pool: EnvPool,
        agent: Agent,
        *,
        concurrency: int = 64,
        policy_concurrency: int | None = None,
        max_attempts: int = 3,
        retry_backoff_s: float = 0.5,
        episode_timeout_s: float | None = None,
        provenance: Mapping[str, Any] | None = None,
        on_turn: TurnCallback | None = None,
    ) -> None:
        if concurrency < 1:
            raise AgenthubError(f"concurrency must be >= 1, got {concurrency}")
        if max_attempts < 1:
            raise AgenthubError(f"max_attempts must be >= 1, got {max_attempts}")
        self.pool = pool
        self.agent = agent
        self.concurrency = concurrency
        self.policy_limit = asyncio.Semaphore(policy_concurrency) if policy_concurrency else None
        self.max_attempts = max_attempts
        self.retry_backoff_s = retry_backoff_s
        self.episode_timeout_s = episode_timeout_s
        describe = getattr(agent, "describe", None)
        self.provenance = {**(describe() if callable(describe) else {}), **(provenance or {})}
        self.on_turn = on_turn

    # -- many episodes ------------------------------------------------------------

    async def stream(
        self, requests: Iterable[EpisodeRequest], *, skip: Container[str] = ()
    ) -> AsyncIterator[Trajectory]:
        """Run ``requests`` (except keys in ``skip``) ``concurrency`` at a time; yield each as it ends."""
        info = await self.pool.info()
        pending = (r for r in requests if r.key not in skip)
        results: asyncio.Queue[Trajectory | BaseException | None] = asyncio.Queue()

        async def worker() -> None:
            try:
                for request in pending:  # one shared iterator: each request is taken once
                    await results.put(await self.run_one(request, info))
            except BaseException as exc:  # a bug, not an episode outcome: stop the run loudly
                await results.put(exc)
                raise
            finally:
                await results.put(None)

        workers = [asyncio.create_task(worker(), name=f"agenthub-episode-worker-{i}") for i in range(self.concurrency)]
        running = len(workers)
        try:
            while running:
                item = await results.get()
                if item is None:
                    running -= 1
                elif isinstance(item, BaseException):
                    raise item
                else:
                    yield item
        finally:
            for task in workers:
                task.cancel()
            await asyncio.gather(*workers, return_exceptions=True)

    async def run(self, requests: Iterable[EpisodeRequest]) -> list[Trajectory]:
        """All episodes, in the order they finished."""
        return [t async for t in self.stream(requests)]

    # -- one episode, retried on infra failures -------------------------------------

    async def run_one(self, request: EpisodeRequest, info: EnvInfo | None = None) -> Trajectory:
        info = info or await self.pool.info()
        errors: list[str] = []
        for attempt in itertools.count(1):
            trajectory, retry = await self._attempt(request, info)
            trajectory.attempts = attempt
            if trajectory.error is not None:
                errors.append(f"attempt {attempt}: {trajectory.error}")
                trajectory.error = "; ".join(errors)
            if not (trajectory.outcome.is_infra_failure and retry) or attempt >= self.max_attempts:
                return trajectory
            log.info("episode %s: %s; retrying on a fresh session", request.key, errors[-1])
            await asyncio.sleep(self.retry_backoff_s * (2 ** (attempt - 1)) * (0.5 + random.random()))
        raise AssertionError("unreachable")

    async def _attempt(self, request: EpisodeRequest, info: EnvInfo) -> tuple[Trajectory, bool]:
        """One session's worth of the episode, and whether a fresh session might do better."""
        task = request.task
        max_turns = task.max_turns or info.default_max_turns
        started = time.monotonic()
        turns: list[Turn] = []
        first_observation = ""
        tokens: TokenTrace | None = None
        outcome, error, retry = Outcome.TRUNCATED, None, False
        task_id: TaskId | None = task.task_id
        endpoint_url = ""
        try:
            async with contextlib.AsyncExitStack() as stack:
                if self.episode_timeout_s is not None:
                    await stack.enter_async_context(asyncio.timeout(self.episode_timeout_s))
                try:
                    endpoint = await stack.enter_async_context(self.pool.slot())
                except NoHealthyEndpointError as exc:
                    raise _Failure(Outcome.ENV_ERROR, str(exc), retry=True) from exc
                endpoint_url = endpoint.url
                try:
                    session = await endpoint.client.create_session(
                        task.task_id, split=task.split, seed=task.seed, options=task.options
                    )
                except (EnvServiceError, EnvServerUnavailableError) as exc:
                    self._report(endpoint, exc)
                    raise _env_failure(exc, during="create session") from exc
                stack.push_async_callback(_close_quietly, session)
                task_id, first_observation = session.task_id, session.observation
                episode = self.agent.start_episode(task.model_copy(update={"task_id": task_id}), info)
                try:
                    outcome = await self._play(request.key, episode, session, max_turns, turns, endpoint)
                finally:
                    trace = getattr(episode, "token_trace", None)
                    tokens = trace.model_copy(deep=True) if isinstance(trace, TokenTrace) else None
        except _Failure as failure:
            outcome, error, retry = failure.outcome, str(failure), failure.retry
        except TimeoutError:
            outcome, retry = Outcome.TIMEOUT, True
            error = f"the episode took longer than episode_timeout_s={self.episode_timeout_s:g}"
        trajectory = Trajectory(
            task=task.model_copy(update={"task_id": task_id}),
            first_observation=first_observation,
            turns=turns,
            reward=sum(t.reward for t in turns),
            outcome=outcome,
            error=error,
            provenance=self._provenance(info, task, task_id, max_turns, endpoint_url),
            key=request.key,
            tokens=tokens,
            duration_s=round(time.monotonic() - started, 6),
        )
        return trajectory, retry

    async def _play(
        self,
        key: str,
        episode: AgentEpisode,
        session: RemoteSession,
        max_turns: int,
        turns: list[Turn],
        endpoint: Any,
    ) -> Outcome:
        if self.policy_limit is not None:
            episode = _BoundedEpisode(episode, self.policy_limit)
        observation = Observation(text=session.observation, info=session.info)
        while len(turns) < max_turns:
            try:
                reply = await episode.act(observation)
            except ContextLengthExceeded:
                return Outcome.TRUNCATED  # the policy's context is full: a normal, trainable end
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # any agent failure is the agent's outcome, never a crash of the run
                message = f"the agent failed: {type(exc).__name__}: {exc}"
                raise _Failure(Outcome.AGENT_ERROR, message, retry=False) from exc
            try:
                result = await session.step(reply.action)
            except (EnvServiceError, EnvServerUnavailableError) as exc:
                self._report(endpoint, exc)
                raise _env_failure(exc, during="step") from exc
            turn = Turn(
                action=reply.action,
                observation=result.observation,
                reward=result.reward,
                terminated=result.terminated,
                truncated=result.truncated,
                info=result.info,
                text=reply.text if reply.text != reply.action else None,
                token_ids=reply.token_ids,
                logprobs=reply.logprobs,
            )
            turns.append(turn)
            if self.on_turn is not None:
                self.on_turn(key, len(turns), turn)
            if result.terminated:
                won = result.info.get("won")
                return Outcome.SUCCESS if (bool(won) if won is not None else result.reward > 0) else Outcome.FAILURE
            if result.truncated:
                return Outcome.TRUNCATED
            observation = Observation(text=result.observation, info=result.info)
        return Outcome.TRUNCATED

    def _report(self, endpoint: Any, exc: Exception) -> None:
        if isinstance(exc, EnvServerUnavailableError):
            self.pool.report_failure(endpoint, exc)

    def _provenance(
        self, info: EnvInfo, task: Task, task_id: TaskId | None, max_turns: int, endpoint_url: str
    ) -> dict[str, Any]:
        return {
            "agenthub_version": __version__,
            "protocol": PROTOCOL_VERSION,
            "env": info.name,
            "env_version": info.version,
            "task_id": task_id,
            "split": task.split,
            "seed": task.seed,
            "max_turns": max_turns,
            "endpoint": endpoint_url,
            **self.provenance,
        }


async def _close_quietly(session: RemoteSession) -> None:
    # A dead server's sessions are freed by its TTL reaper or its restart.
    with contextlib.suppress(EnvServiceError, EnvServerUnavailableError):
        await session.close()
