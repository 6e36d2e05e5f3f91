"""The Ray actor on one node: that node's env servers, its agent and its executor.

It runs on the node it was placed on and knows nothing of the others: the driver
(:mod:`agenthub.rollout.ray.driver`) hands it batches of episodes and reads each
trajectory back as its episode ends.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agenthub.protocols import Agent
from agenthub.redaction import redact_secrets
from agenthub.rollout.executor import EpisodeRequest, Executor
from agenthub.rollout.pool import EnvPool
from agenthub.rollout.ray.errors import NodeWorkerSetupError, import_ray
from agenthub.types import EnvInfo, TaskList, Trajectory

log = logging.getLogger("agenthub.ray")

NODE_WATCH_INTERVAL_S = 0.5

AgentFactory = Callable[[], Agent]
"""A picklable zero-argument callable that builds the agent on each node."""


@dataclass(frozen=True)
class NodeWorkerSpec:
    """Everything a node worker needs to build its servers, agent and executor (sent pickled)."""

    env: str
    agent: str | AgentFactory
    agent_kwargs: Mapping[str, Any] = field(default_factory=dict)
    processes: int = 1
    concurrency: int = 64
    env_overrides: Mapping[str, Any] = field(default_factory=dict)
    executor_options: Mapping[str, Any] = field(default_factory=dict)
    opponents: Mapping[int, tuple[str, Mapping[str, Any]]] = field(default_factory=dict)
    """Multi-player envs: the agent name and settings of each seat ``agent`` does not play."""

    def make_agent(self) -> Agent:
        if isinstance(self.agent, str):
            from agenthub.plugins import get_plugin_host

            return get_plugin_host().agent(self.agent).make(**self.agent_kwargs)
        return self.agent()

    def opponent_provenance(self) -> dict[int, dict[str, Any]]:
        """What each opponent seat's trajectories record of who played it: its name and public settings."""
        return {
            seat: {"agent": name, "agent_kwargs": redact_secrets(kwargs)}
            for seat, (name, kwargs) in self.opponents.items()
        }

    def make_opponents(self) -> dict[int, Agent]:
        if not self.opponents:
            return {}
        from agenthub.plugins import get_plugin_host

        host = get_plugin_host()
        return {seat: host.agent(name).make(**kwargs) for seat, (name, kwargs) in self.opponents.items()}


@dataclass(frozen=True)
class NodeWorkerInfo:
    """Where a node worker runs, what it started there, and the env its servers serve."""

    node_id: str
    node_ip: str
    pid: int
    server_urls: tuple[str, ...]
    server_pids: tuple[int, ...]
    env_info: EnvInfo | None = None
    concurrency: int = 0


class NodeWorker:
    """The Ray actor on one node: its env servers, its agent, its executor.

    Setup happens on the first call rather than in ``__init__``, so that an error
    reaches the driver as the error it is, and so that an actor Ray restarted
    after a crash sets itself up again on the driver's next call.
    """

    def __init__(self, spec: NodeWorkerSpec) -> None:
        self.spec = spec
        self._setup_lock = asyncio.Lock()
        self._pool: EnvPool | None = None
        self._executor: Executor | None = None
        self._env_info: EnvInfo | None = None
        self._limit = asyncio.Semaphore(spec.concurrency)
        self._info: NodeWorkerInfo | None = None
        self._watch: asyncio.Task[None] | None = None

    async def ready(self) -> NodeWorkerInfo:
        """Start the servers and the agent if not yet done; where this worker runs."""
        async with self._setup_lock:
            if self._info is None:
                try:
                    await self._setup()
                except Exception as exc:
                    raise NodeWorkerSetupError(f"{type(exc).__name__}: {exc}") from None
        assert self._info is not None
        return self._info

    async def _setup(self) -> None:
        ray = import_ray()
        spec = self.spec
        if self._watch is None:
            self._watch = asyncio.create_task(self._end_with_the_node(os.getppid()))
        node_id = ray.get_runtime_context().get_node_id()
        node_ip = ray.util.get_node_ip_address()
        agent = spec.make_agent()  # before the servers: a wrong agent name fails fast
        opponents = spec.make_opponents()
        pool = await EnvPool.launch(
            spec.env, processes=spec.processes, capacity=spec.concurrency, overrides=dict(spec.env_overrides)
        )
        try:
            env_info = await pool.info()
            options = dict(spec.executor_options)
            provenance = {**options.pop("provenance", {}), "ray_node_id": node_id, "ray_node_ip": node_ip}
            # An opponent's trajectories name the opponent, not the agent (unless the driver said more).
            options.setdefault("opponent_provenance", spec.opponent_provenance())
            executor = Executor(
                pool, agent, concurrency=spec.concurrency, provenance=provenance, opponents=opponents, **options
            )
        except BaseException:
            await pool.close()
            raise
        self._pool, self._executor, self._env_info = pool, executor, env_info
        servers = [e.server for e in pool.endpoints if e.server is not None]
        self._info = NodeWorkerInfo(
            node_id,
            node_ip,
            os.getpid(),
            tuple(e.url for e in pool.endpoints),
            tuple(s.pid for s in servers),
            env_info,
            spec.concurrency,
        )

    async def tasks(self, split: str) -> TaskList:
        """The task ids of ``split``, as this node's servers list them."""
        await self.ready()
        assert self._pool is not None
        return await self._pool.endpoints[0].client.tasks(split)

    async def run_batch(self, batch: Sequence[EpisodeRequest]) -> AsyncIterator[tuple[str, list[Trajectory]]]:
        """Run ``batch`` (at most ``concurrency`` episodes of this node at once); yield each episode's key
        and trajectories as it ends: one, or one per seat of a multi-player env that the executor keeps."""
        await self.ready()
        executor, env_info = self._executor, self._env_info
        assert executor is not None and env_info is not None

        async def one(request: EpisodeRequest) -> tuple[str, list[Trajectory]]:
            async with self._limit:
                return request.key, await executor.run_episode(request, env_info)

        tasks = [asyncio.create_task(one(request)) for request in batch]
        try:
            for finished in asyncio.as_completed(tasks):
                yield await finished
        finally:  # cancelled by the driver: end the episodes, close their sessions
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    async def _end_with_the_node(self, raylet: int) -> None:
        """End this worker, and with it its env servers, once the raylet that started it is gone.

        A worker whose raylet died (the node crashed or was killed) is no longer part of the cluster,
        but Ray leaves its process running, an orphan holding its servers' memory and ports; the driver
        has already handed its episodes to other nodes. So it stops as a machine that went down would.
        """
        while True:  # polled: no event tells a process that its parent died
            await asyncio.sleep(NODE_WATCH_INTERVAL_S)
            if os.getppid() != raylet:
                break
        log.warning("the raylet (pid %d) of this node worker is gone: stopping its env servers and exiting", raylet)
        try:
            if self._pool is not None:
                await asyncio.wait_for(self._pool.close(), timeout=10)
        finally:
            os._exit(1)

    async def close(self) -> None:
        if self._pool is not None:
            await self._pool.close()
            self._pool = None
