"""The same run spread over a Ray cluster: env servers on every node, episodes shared out, one store.

One actor per node (pinned there with Ray's ``NodeAffinitySchedulingStrategy``)
starts ``processes_per_node`` env servers on its node, builds the agent there,
and runs the hub :class:`~agenthub.rollout.executor.Executor` against those
local servers. The driver hands episodes out in small batches to whichever
node has room, so a slow node never holds the run back, and each trajectory
streams back as its episode ends (a Ray streaming generator) to be written
into the one store of the run, exactly as a local run writes it.

A node worker that dies (its process crashed, its node left the cluster)
loses only the episodes it had in flight: they are handed to another worker.
Ray restarts a crashed worker on its node (``max_worker_restarts``); an
episode that was in flight on ``max_worker_losses`` workers as they died is
stored as ``env_error`` instead of being run again, so one poisonous task
cannot take the whole cluster down. Nothing is ever dropped silently.

Ray is optional (``pip install 'agenthub[ray]'``) and imported only here, when
a :class:`RayRollout` starts; on one machine :meth:`EnvPool.launch
<agenthub.rollout.pool.EnvPool.launch>` is all that is needed.

Example::

    summary = await collect_on_ray(
        "textcraft", "openai", episode_requests(tasks, samples=8), store=store,
        processes_per_node=4, concurrency_per_node=128, address="auto",
    )
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import inspect
import logging
import math
import os
from collections import Counter, deque
from collections.abc import AsyncIterator, Callable, Container, Coroutine, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from agenthub._version import __version__
from agenthub.errors import AgenthubError
from agenthub.protocols import Agent
from agenthub.rollout.collect import collect
from agenthub.rollout.executor import EpisodeRequest, Executor
from agenthub.rollout.pool import EnvPool
from agenthub.rollout.progress import RunSummary
from agenthub.rollout.store import RunStore
from agenthub.types import EnvInfo, Outcome, Trajectory

log = logging.getLogger("agenthub.ray")

AgentFactory = Callable[[], Agent]
"""A picklable zero-argument callable that builds the agent on each node."""

# Executor arguments the Ray backend sets itself, or that cannot cross a process boundary.
_RESERVED_EXECUTOR_OPTIONS = {"pool", "agent", "concurrency", "on_turn"}


class RayNotInstalledError(AgenthubError):
    """Ray is needed for this and is not installed."""


class RayBackendError(AgenthubError):
    """The Ray backend could not start, or lost every node worker before the run finished."""


class NodeWorkerSetupError(AgenthubError):
    """A node worker could not start its env servers or its agent; the message is the node's error.

    It carries only text, so that it always crosses back to the driver (some exceptions do not pickle).
    """


def import_ray() -> ModuleType:
    """``ray``, or an error that says how to install it."""
    try:
        import ray
    except ImportError as exc:
        raise RayNotInstalledError(
            "the Ray backend needs Ray: pip install 'agenthub[ray]' "
            "(on one machine, EnvPool.launch(env, processes=N) needs no Ray)"
        ) from exc
    return ray


# -- on each node ---------------------------------------------------------------------------


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

    def make_agent(self) -> Agent:
        if isinstance(self.agent, str):
            from agenthub.plugins import get_plugin_host

            return get_plugin_host().agent(self.agent).make(**self.agent_kwargs)
        return self.agent()


@dataclass(frozen=True)
class NodeWorkerInfo:
    """Where a node worker runs and what it started there."""

    node_id: str
    node_ip: str
    pid: int
    server_urls: tuple[str, ...]
    server_pids: tuple[int, ...]


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
        node_id = ray.get_runtime_context().get_node_id()
        node_ip = ray.util.get_node_ip_address()
        agent = spec.make_agent()  # before the servers: a wrong agent name fails fast
        pool = await EnvPool.launch(
            spec.env, processes=spec.processes, capacity=spec.concurrency, overrides=dict(spec.env_overrides)
        )
        try:
            env_info = await pool.info()
            options = dict(spec.executor_options)
            provenance = {**options.pop("provenance", {}), "ray_node_id": node_id, "ray_node_ip": node_ip}
            executor = Executor(pool, agent, concurrency=spec.concurrency, provenance=provenance, **options)
        except BaseException:
            await pool.close()
            raise
        self._pool, self._executor, self._env_info = pool, executor, env_info
        servers = [e.server for e in pool.endpoints if e.server is not None]
        self._info = NodeWorkerInfo(
            node_id, node_ip, os.getpid(), tuple(e.url for e in pool.endpoints), tuple(s.pid for s in servers)
        )

    async def run_batch(self, batch: Sequence[EpisodeRequest]) -> AsyncIterator[Trajectory]:
        """Run ``batch`` (at most ``concurrency`` episodes of this node at once); yield each as it ends."""
        await self.ready()
        executor, env_info = self._executor, self._env_info
        assert executor is not None and env_info is not None

        async def one(request: EpisodeRequest) -> Trajectory:
            async with self._limit:
                return await executor.run_one(request, env_info)

        tasks = [asyncio.create_task(one(request)) for request in batch]
        try:
            for finished in asyncio.as_completed(tasks):
                yield await finished
        finally:  # cancelled by the driver: end the episodes, close their sessions
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    async def close(self) -> None:
        if self._pool is not None:
            await self._pool.close()
            self._pool = None


# -- on the driver ----------------------------------------------------------------------------


class WorkerState(enum.StrEnum):
    STARTING = "starting"
    READY = "ready"
    RECOVERING = "recovering"
    """It died while running episodes; waiting to see whether Ray restarted it."""
    DEAD = "dead"


@dataclass(eq=False)
class _Worker:
    node_id: str
    handle: Any
    state: WorkerState = WorkerState.STARTING
    info: NodeWorkerInfo | None = None
    episodes: int = 0
    deaths: int = 0
    last_error: str | None = None


@dataclass(frozen=True)
class _Finished:
    worker: _Worker
    trajectory: Trajectory


@dataclass(frozen=True)
class _BatchEnded:
    worker: _Worker
    unfinished: list[EpisodeRequest]
    """Requests of the batch that got no trajectory: the worker died before it sent them."""
    death: str | None = None


@dataclass(frozen=True)
class _Recovered:
    worker: _Worker
    info: NodeWorkerInfo | None
    error: str | None = None


@dataclass(frozen=True)
class _Crashed:
    error: BaseException


_Event = _Finished | _BatchEnded | _Recovered | _Crashed


class RayRollout:
    """Node workers on a Ray cluster that run episodes like one big :class:`Executor`.

    The workers (and their env servers) live from :meth:`start` to :meth:`close`,
    so a training loop streams every step's episodes through the same servers.

    Example::

        async with RayRollout("textcraft", "openai", processes_per_node=4, address="auto") as rollout:
            async for trajectory in rollout.stream(episode_requests(tasks, samples=8)):
                store.write(trajectory)

    Args:
        env: the env to serve on every node; its plugin must be installed on every node.
        agent: an agent name registered by a plugin (built on each node with
            ``agent_kwargs``), or a picklable zero-argument factory.
        processes_per_node: env server processes started on each node.
        concurrency_per_node: episodes run at once on each node.
        batch_size: episodes handed to a node in one call; smaller shares the tail
            of a run out more evenly, larger costs fewer calls.
        nodes: Ray node ids to use; by default every alive node that offers CPUs.
        address: the cluster to connect to when Ray is not initialized yet
            (``"auto"``, ``"ray://head:10001"``; None starts a local one).
        env_overrides: server settings (``max_sessions``, ``ttl``, ``token``, ...).
        executor_options: more :class:`Executor` arguments (``max_attempts``,
            ``episode_timeout_s``, ``policy_concurrency`` (per node), ``provenance``, ...).
        max_worker_restarts: how often Ray restarts a crashed worker on its node.
        max_worker_losses: an episode in flight on this many workers as they died is
            stored as ``env_error`` rather than handed out again.
        start_timeout_s: how long a worker may take to start its servers.
    """

    def __init__(
        self,
        env: str,
        agent: str | AgentFactory,
        *,
        agent_kwargs: Mapping[str, Any] | None = None,
        processes_per_node: int = 1,
        concurrency_per_node: int = 64,
        batch_size: int = 8,
        nodes: Sequence[str] | None = None,
        address: str | None = None,
        env_overrides: Mapping[str, Any] | None = None,
        executor_options: Mapping[str, Any] | None = None,
        max_worker_restarts: int = 3,
        max_worker_losses: int = 2,
        start_timeout_s: float = 300.0,
    ) -> None:
        for name, value in [
            ("processes_per_node", processes_per_node),
            ("concurrency_per_node", concurrency_per_node),
            ("batch_size", batch_size),
            ("max_worker_losses", max_worker_losses),
        ]:
            if value < 1:
                raise AgenthubError(f"{name} must be >= 1, got {value}")
        if max_worker_restarts < 0:
            raise AgenthubError(f"max_worker_restarts must be >= 0, got {max_worker_restarts}")
        if not isinstance(agent, str) and not callable(agent):
            raise AgenthubError(f"agent must be an agent name or a zero-argument factory, got {agent!r}")
        if agent_kwargs and not isinstance(agent, str):
            raise AgenthubError(
                "agent_kwargs go with an agent name; bind a factory's arguments yourself, "
                "e.g. functools.partial(MyAgent, model='m')"
            )
        options = dict(executor_options or {})
        _check_executor_options(options)
        self.spec = NodeWorkerSpec(
            env=env,
            agent=agent,
            agent_kwargs=dict(agent_kwargs or {}),
            processes=processes_per_node,
            concurrency=concurrency_per_node,
            env_overrides=dict(env_overrides or {}),
            executor_options=options,
        )
        self.batch_size = batch_size
        self.wanted_nodes = list(nodes) if nodes is not None else None
        self.address = address
        self.max_worker_restarts = max_worker_restarts
        self.max_worker_losses = max_worker_losses
        self.start_timeout_s = start_timeout_s
        self.workers: list[_Worker] = []
        self._ray: ModuleType | None = None
        self._owns_ray = False

    # -- lifecycle ----------------------------------------------------------------------

    async def __aenter__(self) -> RayRollout:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def start(self) -> RayRollout:
        """Connect to Ray, place one worker on each node, wait until every one has its servers up."""
        if self._ray is not None:
            raise RayBackendError("this RayRollout is already started; close() it before starting it again")
        ray = self._ray = import_ray()
        if not ray.is_initialized():
            ray.init(address=self.address)
            self._owns_ray = True
        try:
            from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

            actor_class = ray.remote(num_cpus=0, max_restarts=self.max_worker_restarts)(NodeWorker)
            for node_id in self._node_ids(ray):
                placement = NodeAffinitySchedulingStrategy(node_id=node_id, soft=False)
                handle = actor_class.options(scheduling_strategy=placement).remote(self.spec)
                self.workers.append(_Worker(node_id, handle))
            results = await asyncio.wait_for(
                asyncio.gather(*(w.handle.ready.remote() for w in self.workers), return_exceptions=True),
                timeout=self.start_timeout_s,
            )
        except TimeoutError:
            await self.close()
            raise RayBackendError(
                f"the node workers did not start their {self.spec.env!r} servers within "
                f"start_timeout_s={self.start_timeout_s:g}; check the nodes' resources and the Ray logs"
            ) from None
        except BaseException:
            await self.close()
            raise
        failures = []
        for worker, result in zip(self.workers, results, strict=True):
            if isinstance(result, BaseException):
                failures.append(f"node {worker.node_id}: {_reason(result)}")
            else:
                worker.info, worker.state = result, WorkerState.READY
        if failures:
            await self.close()
            raise RayBackendError("a node worker could not start: " + "; ".join(failures))
        log.info("Ray rollout ready on %d nodes: %s", len(self.workers), [w.node_id for w in self.workers])
        return self

    async def close(self) -> None:
        """Stop every worker's env servers and the workers; shut Ray down if :meth:`start` started it."""
        ray = self._ray
        if ray is None:
            return
        closing = [
            asyncio.ensure_future(_ignore_ray_errors(ray, w.handle.close.remote()))
            for w in self.workers
            if w.state is not WorkerState.DEAD
        ]
        if closing:
            _, late = await asyncio.wait(closing, timeout=30)
            for task in late:  # killed below either way
                task.cancel()
            await asyncio.gather(*closing, return_exceptions=True)
        for worker in self.workers:
            with contextlib.suppress(Exception):  # already gone with its node
                ray.kill(worker.handle)
            worker.state = WorkerState.DEAD
        self.workers = []
        if self._owns_ray:
            ray.shutdown()
            self._owns_ray = False
        self._ray = None

    def _node_ids(self, ray: ModuleType) -> list[str]:
        alive = {n["NodeID"]: n for n in ray.nodes() if n.get("Alive")}
        if self.wanted_nodes is not None:
            missing = [n for n in self.wanted_nodes if n not in alive]
            if missing:
                raise RayBackendError(f"these Ray nodes are not alive: {missing}; alive nodes: {sorted(alive)}")
            return list(self.wanted_nodes)
        usable = [node_id for node_id, n in alive.items() if n.get("Resources", {}).get("CPU", 0) > 0]
        if not usable:
            raise RayBackendError(
                f"no alive Ray node offers CPUs (alive nodes: {len(alive)}); start worker nodes with "
                "`ray start --address=HEAD:6379`, or name the nodes to use with nodes=[...]"
            )
        return usable

    def stats(self) -> list[dict[str, Any]]:
        """One row per node worker: where it runs, its state, its servers, what it has done."""
        return [
            {
                "node_id": w.node_id,
                "state": w.state.value,
                "pid": w.info.pid if w.info else None,
                "server_urls": list(w.info.server_urls) if w.info else [],
                "server_pids": list(w.info.server_pids) if w.info else [],
                "episodes": w.episodes,
                "deaths": w.deaths,
                "last_error": w.last_error,
            }
            for w in self.workers
        ]

    # -- episodes --------------------------------------------------------------------------

    async def stream(
        self, requests: Iterable[EpisodeRequest], *, skip: Container[str] = ()
    ) -> AsyncIterator[Trajectory]:
        """Run ``requests`` (except keys in ``skip``) over the nodes; yield each trajectory as it ends."""
        ray = self._ray
        if ray is None or not self.workers:
            raise RayBackendError("the Ray rollout is not started: use `async with RayRollout(...)` or start()")
        queue = deque(r for r in requests if r.key not in skip)
        losses: Counter[str] = Counter()
        events: asyncio.Queue[_Event] = asyncio.Queue()
        tasks: set[asyncio.Task[None]] = set()
        active = 0  # tasks whose last event has not been handled yet
        outstanding: Counter[_Worker] = Counter()  # this stream's episodes handed to each worker, not yet back
        window = self.spec.concurrency + self.batch_size  # keep one batch waiting on every node

        def spawn(coroutine: Coroutine[Any, Any, None]) -> None:
            nonlocal active
            task = asyncio.create_task(coroutine)
            tasks.add(task)
            task.add_done_callback(tasks.discard)
            active += 1

        def hand_out() -> None:
            progress = True
            while queue and progress:  # one batch per node per round: fair from the first batch on
                progress = False
                ready = [w for w in self.workers if w.state is WorkerState.READY and outstanding[w] < window]
                for worker in ready:
                    size = min(self.batch_size, window - outstanding[worker], math.ceil(len(queue) / len(ready)))
                    batch = [queue.popleft() for _ in range(min(size, len(queue)))]
                    if batch:
                        outstanding[worker] += len(batch)
                        spawn(self._run_batch(ray, worker, batch, events))
                        progress = True

        hand_out()
        try:
            while active:
                event = await events.get()
                if isinstance(event, _Finished):
                    outstanding[event.worker] -= 1
                    event.worker.episodes += 1
                    trajectory = event.trajectory
                    if trajectory.key is not None and losses[trajectory.key]:
                        trajectory.provenance["ray_worker_losses"] = losses[trajectory.key]
                    yield trajectory
                    continue
                active -= 1
                if isinstance(event, _BatchEnded):
                    worker = event.worker
                    outstanding[worker] -= len(event.unfinished)
                    if event.death is not None:
                        for lost in self._lost(worker, event.unfinished, event.death, losses, queue):
                            yield lost
                        if worker.state is WorkerState.READY:  # the first of its batches to report the death
                            worker.state, worker.last_error = WorkerState.RECOVERING, event.death
                            worker.deaths += 1
                            log.warning("Ray node worker on %s died: %s", worker.node_id, event.death)
                            spawn(self._recover(ray, worker, events))
                elif isinstance(event, _Recovered):
                    self._recovered(event)
                else:
                    reason = _reason(event.error)
                    raise RayBackendError(f"a node worker failed outside any episode: {reason}") from event.error
                hand_out()
            if queue:
                deaths = "; ".join(f"node {w.node_id}: {w.last_error}" for w in self.workers)
                raise RayBackendError(
                    f"every node worker died and {len(queue)} episodes were not run ({deaths}); every finished "
                    "episode is in the store: resume the run once the cluster is back to run the rest"
                )
        finally:
            for task in list(tasks):
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    def _lost(
        self,
        worker: _Worker,
        unfinished: list[EpisodeRequest],
        death: str,
        losses: Counter[str],
        queue: deque[EpisodeRequest],
    ) -> list[Trajectory]:
        """Requests that died with ``worker``: back to the front of the queue, or stored as infra failures."""
        given_up = []
        for request in reversed(unfinished):
            losses[request.key] += 1
            if losses[request.key] < self.max_worker_losses:
                queue.appendleft(request)
                continue
            given_up.append(
                Trajectory(
                    task=request.task,
                    first_observation="",
                    outcome=Outcome.ENV_ERROR,
                    error=(
                        f"the Ray node worker running this episode died (losses: {losses[request.key]}, "
                        f"max_worker_losses={self.max_worker_losses}); the last on node {worker.node_id}: {death}"
                    ),
                    provenance={
                        "agenthub_version": __version__,
                        "env": self.spec.env,
                        "ray_node_id": worker.node_id,
                        "ray_worker_losses": losses[request.key],
                    },
                    key=request.key,
                    attempts=losses[request.key],
                )
            )
        log.info(
            "%d episodes were in flight on the worker that died on %s; %d handed out again",
            len(unfinished),
            worker.node_id,
            len(unfinished) - len(given_up),
        )
        return given_up

    def _recovered(self, event: _Recovered) -> None:
        worker = event.worker
        if event.info is not None:
            log.info("Ray node worker on %s is back (pid %d)", worker.node_id, event.info.pid)
            worker.info, worker.state = event.info, WorkerState.READY
        else:
            log.warning("Ray node worker on %s is gone for good: %s", worker.node_id, event.error)
            worker.state, worker.last_error = WorkerState.DEAD, event.error

    async def _run_batch(
        self, ray: ModuleType, worker: _Worker, batch: list[EpisodeRequest], events: asyncio.Queue[_Event]
    ) -> None:
        unfinished = {r.key: r for r in batch}
        generator = worker.handle.run_batch.options(num_returns="streaming").remote(batch)
        try:
            async for ref in generator:
                trajectory: Trajectory = await ref
                unfinished.pop(trajectory.key or "", None)
                await events.put(_Finished(worker, trajectory))
        except ray.exceptions.RayActorError as exc:
            await events.put(_BatchEnded(worker, list(unfinished.values()), death=_reason(exc)))
            return
        except asyncio.CancelledError:
            with contextlib.suppress(Exception):
                ray.cancel(generator)
            raise
        except Exception as exc:  # a bug in the worker, not an episode outcome: stop the run loudly
            await events.put(_Crashed(exc))
            return
        await events.put(_BatchEnded(worker, list(unfinished.values())))

    async def _recover(self, ray: ModuleType, worker: _Worker, events: asyncio.Queue[_Event]) -> None:
        """Wait for Ray's restart of a crashed worker and for its fresh servers; or learn it is gone."""
        deadline = asyncio.get_running_loop().time() + self.start_timeout_s
        while True:
            try:
                info = await asyncio.wait_for(
                    worker.handle.ready.remote(), timeout=deadline - asyncio.get_running_loop().time()
                )
            except ray.exceptions.ActorUnavailableError as exc:  # still restarting: ask again shortly
                if asyncio.get_running_loop().time() + 0.5 >= deadline:
                    await events.put(_Recovered(worker, None, f"not back within {self.start_timeout_s:g}s: {exc}"))
                    return
                await asyncio.sleep(0.5)
            except Exception as exc:  # died for good, its node left, or its restart could not set up
                await events.put(_Recovered(worker, None, _reason(exc)))
                return
            else:
                await events.put(_Recovered(worker, info))
                return

    # -- a whole run --------------------------------------------------------------------------

    async def collect(
        self,
        requests: Sequence[EpisodeRequest],
        *,
        store: RunStore | None = None,
        progress: bool | None = None,
        on_trajectory: Callable[[Trajectory], None] | None = None,
    ) -> RunSummary:
        """:func:`agenthub.rollout.collect.collect` over the cluster: resume, one store, progress."""
        return await collect(self, requests, store=store, progress=progress, on_trajectory=on_trajectory)


async def collect_on_ray(
    env: str,
    agent: str | AgentFactory,
    requests: Sequence[EpisodeRequest],
    *,
    store: RunStore | None = None,
    progress: bool | None = None,
    on_trajectory: Callable[[Trajectory], None] | None = None,
    **options: Any,
) -> RunSummary:
    """Start a :class:`RayRollout` (``options`` are its keyword arguments), run every request
    not finished in ``store`` into it, and stop the workers again.
    """
    async with RayRollout(env, agent, **options) as rollout:
        return await rollout.collect(requests, store=store, progress=progress, on_trajectory=on_trajectory)


def _check_executor_options(options: Mapping[str, Any]) -> None:
    accepted = set(inspect.signature(Executor).parameters) - _RESERVED_EXECUTOR_OPTIONS
    reserved = sorted(set(options) & _RESERVED_EXECUTOR_OPTIONS)
    if reserved:
        raise AgenthubError(
            f"executor_options may not set {reserved}: the Ray backend sets the pool, the agent and "
            "concurrency (concurrency_per_node), and on_turn cannot run on another node"
        )
    unknown = sorted(set(options) - accepted)
    if unknown:
        raise AgenthubError(f"unknown executor_options {unknown}; accepted: {sorted(accepted)}")


def _reason(exc: BaseException) -> str:
    """The error as the user should read it: a worker's own exception in full, or the gist of Ray's."""
    cause = getattr(exc, "cause", None)  # a RayTaskError wraps what the worker raised
    if isinstance(cause, BaseException):
        return str(cause) if isinstance(cause, NodeWorkerSetupError) else f"{type(cause).__name__}: {cause}"
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__


async def _ignore_ray_errors(ray: ModuleType, ref: Any) -> None:
    with contextlib.suppress(ray.exceptions.RayError):
        await ref
