"""The executor against real env servers: streaming, limits, outcomes, retries, restarts."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from agenthub import AgentReply, EnvInfo, LocalServer, Observation, Outcome, Task, ThreadedServer
from agenthub.builtin.agents import GuessOracle, GuessOracleEpisode
from agenthub.rollout.executor import EpisodeRequest, Executor, episode_requests
from agenthub.rollout.pool import EnvPool
from agenthub.service.server import spec_from_factory

from ..service.envs import FailingEnv

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def guess_url() -> Iterator[str]:
    with LocalServer("guess") as server:
        yield server.url


class PacedOracle:
    """The guess oracle, waiting ``delays[task_id]`` seconds per move; counts moves in flight."""

    def __init__(self, delays: dict[int, float] | None = None, default: float = 0.0) -> None:
        self.delays = delays or {}
        self.default = default
        self.active = 0
        self.peak = 0

    def start_episode(self, task: Task, env: EnvInfo) -> PacedEpisode:
        return PacedEpisode(self, self.delays.get(int(task.task_id or 0), self.default))


class PacedEpisode:
    def __init__(self, agent: PacedOracle, delay: float) -> None:
        self.agent, self.delay, self.inner = agent, delay, GuessOracleEpisode()

    async def act(self, observation: Observation) -> AgentReply:
        self.agent.active += 1
        self.agent.peak = max(self.agent.peak, self.agent.active)
        try:
            await asyncio.sleep(self.delay)
            return await self.inner.act(observation)
        finally:
            self.agent.active -= 1


def guess_tasks(*ids: int, max_turns: int | None = None) -> list[Task]:
    return [Task(env="guess", task_id=i, max_turns=max_turns) for i in ids]


async def test_results_stream_as_episodes_finish_so_a_slow_one_holds_back_none(guess_url: str) -> None:
    agent = PacedOracle({0: 0.4}, default=0.0)
    async with EnvPool.from_urls([guess_url]) as pool:
        order = [
            t.task.task_id
            async for t in Executor(pool, agent, concurrency=4).stream(episode_requests(guess_tasks(*range(12))))
        ]
    assert sorted(order) == list(range(12))  # type: ignore[type-var]
    assert order[-1] == 0  # started first, finished last; 11 others went past it


async def test_policy_and_env_endpoint_limits_hold(guess_url: str) -> None:
    agent = PacedOracle(default=0.01)
    peaks: list[int] = []
    async with EnvPool.from_urls([guess_url], capacity=3) as pool:
        executor = Executor(
            pool, agent, concurrency=8, policy_concurrency=2, on_turn=lambda *_: peaks.append(pool.endpoints[0].in_use)
        )
        trajectories = await executor.run(episode_requests(guess_tasks(*range(10))))
    assert all(t.outcome is Outcome.SUCCESS for t in trajectories)
    assert agent.peak == 2  # at most 2 policy calls at once, and the limit was reached
    assert max(peaks) == 3  # at most 3 sessions on the endpoint, and it was reached


async def test_the_horizon_truncates_and_provenance_is_recorded(guess_url: str) -> None:
    async with EnvPool.from_urls([guess_url]) as pool:
        executor = Executor(pool, PacedOracle(), provenance={"model": "oracle", "sampling": {"temperature": 0}})
        [trajectory] = await executor.run([EpisodeRequest("a", Task(env="guess", task_id=1, max_turns=2, seed=5))])
    assert trajectory.outcome is Outcome.TRUNCATED and len(trajectory.turns) == 2 and trajectory.trainable
    provenance = trajectory.provenance
    assert provenance["env"] == "guess" and provenance["max_turns"] == 2 and provenance["task_id"] == 1
    assert provenance["seed"] == 5 and provenance["model"] == "oracle" and provenance["agenthub_version"]
    assert provenance["protocol"] == 1 and provenance["env_version"] and provenance["endpoint"] == guess_url


async def test_an_agent_that_raises_is_an_agent_error_not_retried_not_a_crash(guess_url: str) -> None:
    class Broken:
        def start_episode(self, task: Task, env: EnvInfo) -> Broken:
            return self

        async def act(self, observation: Observation) -> AgentReply:
            raise KeyError("the parser lost its place")

    async with EnvPool.from_urls([guess_url]) as pool:
        [trajectory] = await Executor(pool, Broken()).run(episode_requests(guess_tasks(3)))
    assert trajectory.outcome is Outcome.AGENT_ERROR and trajectory.attempts == 1
    assert trajectory.error is not None and "KeyError" in trajectory.error and not trajectory.trainable
    assert trajectory.turns == []


async def test_a_persistent_env_failure_is_retried_then_stored_marked_without_made_up_text() -> None:
    class Exploder:
        def start_episode(self, task: Task, env: EnvInfo) -> Exploder:
            return self

        async def act(self, observation: Observation) -> AgentReply:
            return AgentReply(action="explode")

    with ThreadedServer(spec_from_factory(FailingEnv)) as server:
        async with EnvPool.from_urls([server.url]) as pool:
            executor = Executor(pool, Exploder(), max_attempts=3, retry_backoff_s=0.01)
            [trajectory] = await executor.run(episode_requests([Task(env="failing", task_id=0)]))
    assert trajectory.outcome is Outcome.ENV_ERROR and not trajectory.trainable
    assert trajectory.attempts == 3 and trajectory.error is not None
    assert trajectory.error.count("simulator crashed") == 3  # each attempt's real error, kept for the record
    assert trajectory.turns == []  # nothing the model could be trained on


async def test_an_episode_over_its_time_limit_is_a_timeout() -> None:
    with ThreadedServer(spec_from_factory(FailingEnv)) as server:
        async with EnvPool.from_urls([server.url]) as pool:
            executor = Executor(
                pool, PacedOracle(default=5.0), episode_timeout_s=0.2, max_attempts=2, retry_backoff_s=0
            )
            [trajectory] = await executor.run(episode_requests([Task(env="failing", task_id=0)]))
            assert pool.endpoints[0].in_use == 0  # the slot was given back
    assert trajectory.outcome is Outcome.TIMEOUT and trajectory.attempts == 2 and not trajectory.trainable


async def test_a_killed_server_is_avoided_restarted_and_its_episodes_retried() -> None:
    async with await EnvPool.launch("guess", processes=2, health_interval_s=0.1) as pool:
        agent = PacedOracle(default=0.02)
        executor = Executor(pool, agent, concurrency=8, max_attempts=4, retry_backoff_s=0.05)
        victim = pool.endpoints[0]
        results = []
        async for trajectory in executor.stream(episode_requests(guess_tasks(*range(40)))):
            results.append(trajectory)
            if len(results) == 5:
                assert victim.server is not None
                victim.server.kill()  # SIGKILL mid-run, sessions in flight
        for _ in range(100):  # the health watcher restarts it
            if victim.restarts:
                break
            await asyncio.sleep(0.1)
        assert victim.restarts == 1 and victim.healthy and victim.server is not None and victim.server.alive()
    assert len(results) == 40 and all(t.outcome is Outcome.SUCCESS for t in results)
    assert any(t.attempts > 1 for t in results)  # some were in flight on the killed server
    assert {t.key for t in results} == {f"{i}/0" for i in range(40)}


async def test_sessions_spread_over_the_pool(guess_url: str) -> None:
    with LocalServer("guess") as second:
        async with EnvPool.from_urls([guess_url, second.url], capacity=2) as pool:
            trajectories = await Executor(pool, GuessOracle(), concurrency=4).run(
                episode_requests(guess_tasks(*range(16)))
            )
            started = [e.sessions_started for e in pool.endpoints]
    assert all(t.outcome is Outcome.SUCCESS for t in trajectories)
    assert sum(started) == 16 and min(started) >= 4
