"""The hub executor: many episodes at once, each finishing on its own.

An episode holds a slot on one env endpoint, creates a session with its
task, lets the policy act until the env ends it or the horizon is reached,
and closes the session. Results stream out in the order episodes finish, so
a slow episode never holds back a fast one. Infra failures (a server that
died, a timeout) are retried on a fresh session; if they keep failing the
trajectory is kept, marked, and never carries made-up text.

Every episode is played by the one loop of :mod:`agenthub.rollout.episode_loop`. On a
multi-player env (``players`` > 1) an episode is played by one agent per seat (``agent`` for
every seat not in ``opponents``: self-play by default) and yields one trajectory per seat, keyed
``"<task index>/<sample>/seat<N>"``; ``seats`` keeps only the seats a trainer learns from. Each
seat's trajectory records who played it: ``provenance["role"]`` is ``agent`` or ``opponent``, and
an opponent's seat carries the opponent's own name and settings
(:func:`~agenthub.rollout.provenance.seated_provenance`). ``on_turn`` hears every seat's turns,
each under its trajectory's key.
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

from agenthub.errors import AgenthubError, EnvServerUnavailableError
from agenthub.protocols import Agent
from agenthub.rollout.episode_loop import EpisodeFailure, EpisodePlay, TurnCallback
from agenthub.rollout.pool import Endpoint, EnvPool, NoHealthyEndpointError
from agenthub.rollout.provenance import agent_provenance, seated_provenance
from agenthub.types import EnvInfo, Outcome, Task, Trajectory

log = logging.getLogger("agenthub.executor")


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
        opponents: Mapping[int, Agent] | None = None,
        seats: Container[int] | None = None,
        opponent_provenance: Mapping[int, Mapping[str, Any]] | None = None,
    ) -> None:
        """``on_turn(key, turn_number, turn)`` hears each turn as it is played, ``key`` its
        trajectory's (``"<key>/seat<N>"`` for a seat of a multi-player env);
        ``opponents`` (multi-player envs): the agent of each seat ``agent`` does not play;
        ``seats``: the seats whose trajectories are returned (default: all of them);
        ``opponent_provenance``: what each opponent seat's trajectories record of the agent that
        played it in place of ``provenance``'s ``agent`` and ``agent_kwargs`` (``{1: {"agent":
        "oracle", "agent_kwargs": {}}}``; default: the opponent's class name)."""
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
        self.provenance = {**agent_provenance(agent), **(provenance or {})}
        self.on_turn = on_turn
        self.opponents = dict(opponents or {})
        self.seats = seats
        self._run_provenance = dict(provenance or {})
        self._opponent_provenance = {s: dict(p) for s, p in (opponent_provenance or {}).items()}

    # -- many episodes ------------------------------------------------------------

    async def stream(
        self, requests: Iterable[EpisodeRequest], *, skip: Container[str] = ()
    ) -> AsyncIterator[Trajectory]:
        """Run ``requests`` (except keys in ``skip``) ``concurrency`` at a time; yield each as it ends."""
        info = await self.pool.info()
        self._check_seats(info)
        pending = (r for r in requests if r.key not in skip)
        results: asyncio.Queue[Trajectory | BaseException | None] = asyncio.Queue()

        async def worker() -> None:
            try:
                for request in pending:  # one shared iterator: each request is taken once
                    for trajectory in await self.run_episode(request, info):
                        if trajectory.key not in skip:  # a seat stored before a kill is not stored twice
                            await results.put(trajectory)
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
        """One episode of a single-player env (see :meth:`run_episode` for any env)."""
        info = info or await self.pool.info()
        if info.multi_player:
            raise AgenthubError(
                f"env {info.name!r} has {info.players} seats, so an episode gives one trajectory per seat; "
                "use Executor.run_episode or Executor.stream"
            )
        [trajectory] = await self.run_episode(request, info)
        return trajectory

    async def run_episode(self, request: EpisodeRequest, info: EnvInfo | None = None) -> list[Trajectory]:
        """One episode, retried on infra failures: its trajectory, or one per seat kept by ``seats``."""
        info = info or await self.pool.info()
        self._check_seats(info)
        errors: list[str] = []
        for attempt in itertools.count(1):
            trajectories, retry = await self._attempt(request, info)
            error = trajectories[0].error
            if error is not None:
                errors.append(f"attempt {attempt}: {error}")
            for trajectory in trajectories:
                trajectory.attempts = attempt
                if error is not None:
                    trajectory.error = "; ".join(errors)
            if not (trajectories[0].outcome.is_infra_failure and retry) or attempt >= self.max_attempts:
                if self.seats is None or not info.multi_player:
                    return trajectories
                return [t for t in trajectories if t.seat in self.seats]
            log.info("episode %s: %s; retrying on a fresh session", request.key, errors[-1])
            await asyncio.sleep(self.retry_backoff_s * (2 ** (attempt - 1)) * (0.5 + random.random()))
        raise AssertionError("unreachable")

    def _check_seats(self, info: EnvInfo) -> None:
        if not info.multi_player and self.opponents:
            raise AgenthubError(
                f"env {info.name!r} is single-player; opponents are for multi-player envs (players > 1)"
            )
        unknown = sorted(s for s in self.opponents if not 0 <= s < info.players)
        if unknown:
            raise AgenthubError(
                f"env {info.name!r} has seats 0 to {info.players - 1}; there is no seat {unknown[0]} for an opponent"
            )

    async def _attempt(self, request: EpisodeRequest, info: EnvInfo) -> tuple[list[Trajectory], bool]:
        """One session's worth of the episode, and whether a fresh session might do better."""
        agents = {s: self.opponents.get(s, self.agent) for s in range(info.players)}
        play = EpisodePlay(
            agents, request.task, info, key=request.key, on_turn=self.on_turn, act_limit=self.policy_limit
        )
        started = time.monotonic()
        endpoint_url = ""
        try:
            async with contextlib.AsyncExitStack() as stack:
                if self.episode_timeout_s is not None:
                    await stack.enter_async_context(asyncio.timeout(self.episode_timeout_s))
                try:
                    endpoint = await stack.enter_async_context(self.pool.slot())
                except NoHealthyEndpointError as exc:
                    raise EpisodeFailure(Outcome.ENV_ERROR, str(exc), retry=True) from exc
                endpoint_url = endpoint.url
                await play.play(endpoint.client, on_unavailable=self._reporter(endpoint))
        except EpisodeFailure as failure:
            play.fail(failure)
        except TimeoutError:
            timeout = f"the episode took longer than episode_timeout_s={self.episode_timeout_s:g}"
            play.fail(EpisodeFailure(Outcome.TIMEOUT, timeout, retry=True))
        duration_s = round(time.monotonic() - started, 6)
        by_seat = None
        if info.multi_player:  # a single-player trajectory records the run's provenance alone, no role
            by_seat = seated_provenance(
                self._run_provenance, self.agent, self.opponents, info.players, self._opponent_provenance
            )
        trajectories = play.trajectories(
            endpoint=endpoint_url, provenance=self.provenance, duration_s=duration_s, seat_provenance=by_seat
        )
        return trajectories, play.retry

    def _reporter(self, endpoint: Endpoint) -> Callable[[EnvServerUnavailableError], None]:
        return lambda exc: self.pool.report_failure(endpoint, exc)
