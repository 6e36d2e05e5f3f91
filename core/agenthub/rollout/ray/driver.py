"""The driver of a Ray run: one worker per node, episodes handed out where there is room, one store.

One actor per node (pinned there with Ray's ``NodeAffinitySchedulingStrategy``,
:mod:`agenthub.rollout.ray.actor`) starts that node's env servers, builds the
agent there, and runs the hub :class:`~agenthub.rollout.executor.Executor`
against them. How many servers and sessions a node holds follows from the
env's declared footprint and the node's resources
(:mod:`agenthub.rollout.ray.resources`); the actor reserves them from Ray. The
driver hands episodes out in small batches to whichever node has room, so a
slow node never holds the run back, and each trajectory streams back as its
episode ends (a Ray streaming generator) to be written into the one store of
the run, exactly as a local run writes it.

A node worker that dies (its process crashed, its whole node left the cluster)
loses only the episodes it had in flight: they are handed to another worker.
Ray restarts a crashed worker on its node (``max_worker_restarts``); an
episode that was in flight on ``max_worker_losses`` workers as they died is
stored as ``env_error`` instead of being run again, so one poisonous task
cannot take the whole cluster down. Nothing is ever dropped silently.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import inspect
import logging
import math
from collections import Counter, deque
from collections.abc import AsyncIterator, Callable, Container, Coroutine, Iterable, Mapping, Sequence
from types import ModuleType
from typing import Any

from agenthub._version import __version__
from agenthub.errors import AgenthubError
from agenthub.rollout.collect import collect
from agenthub.rollout.executor import EpisodeRequest, Executor
from agenthub.rollout.progress import RunSummary
from agenthub.rollout.ray.actor import AgentFactory, NodeWorker, NodeWorkerSpec
from agenthub.rollout.ray.errors import RayBackendError, connect, reason
from agenthub.rollout.ray.events import BatchEnded, Crashed, Event, Finished, Recovered, Worker, WorkerState
from agenthub.rollout.ray.resources import EnvResources, NodePlan, env_resources, plan_node
from agenthub.rollout.store import RunStore, episode_key
from agenthub.types import EnvInfo, Outcome, TaskList, Trajectory

log = logging.getLogger("agenthub.ray")

# Executor arguments the Ray backend sets itself, or that cannot cross a process boundary.
_RESERVED_EXECUTOR_OPTIONS = {"pool", "agent", "concurrency", "on_turn", "opponents"}


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
        processes_per_node: env server processes started on each node (fewer on a node
            whose CPUs or memory hold fewer, see ``cpus_per_server``).
        concurrency_per_node: episodes run at once on each node (fewer on a node whose
            memory holds fewer sessions).
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
        cpus_per_server: CPUs a node reserves for each env server process; default the
            env's footprint (``EnvSpec.footprint``, 1 unless it says otherwise).
        memory_mib_per_session: memory a node reserves for each session; default the
            env's measured footprint (``EnvSpec.footprint``).
        opponents: multi-player envs: ``{seat: (agent name, settings)}`` for each seat
            ``agent`` does not play, built on each node (``seats=`` in ``executor_options``
            keeps only the seats a run scores or trains).
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
        cpus_per_server: float | None = None,
        memory_mib_per_session: float | None = None,
        opponents: Mapping[int, tuple[str, Mapping[str, Any]]] | None = None,
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
            opponents={seat: (name, dict(kwargs)) for seat, (name, kwargs) in (opponents or {}).items()},
        )
        self.batch_size = batch_size
        self.wanted_nodes = list(nodes) if nodes is not None else None
        self.address = address
        self.max_worker_restarts = max_worker_restarts
        self.max_worker_losses = max_worker_losses
        self.start_timeout_s = start_timeout_s
        self.cpus_per_server = cpus_per_server
        self.memory_mib_per_session = memory_mib_per_session
        self.resources: EnvResources | None = None
        self.workers: list[Worker] = []
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
        self.resources = env_resources(
            self.spec.env, cpus_per_server=self.cpus_per_server, memory_mib_per_session=self.memory_mib_per_session
        )
        ray, self._owns_ray = connect(self.address)
        self._ray = ray
        try:
            from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

            actor_class = ray.remote(max_restarts=self.max_worker_restarts)(NodeWorker)
            for plan in self._plans(ray, self.resources):
                placement = NodeAffinitySchedulingStrategy(node_id=plan.node_id, soft=False)
                spec = dataclasses.replace(self.spec, processes=plan.processes, concurrency=plan.concurrency)
                handle = actor_class.options(
                    scheduling_strategy=placement, num_cpus=plan.num_cpus, memory=plan.memory_bytes or None
                ).remote(spec)
                self.workers.append(Worker(plan.node_id, handle, plan))
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
                failures.append(f"node {worker.node_id}: {reason(result)}")
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

    def _plans(self, ray: ModuleType, resources: EnvResources) -> list[NodePlan]:
        """What each usable node runs: as many servers and sessions as its resources hold."""
        alive = {n["NodeID"]: n for n in ray.nodes() if n.get("Alive")}
        if self.wanted_nodes is not None:
            missing = [n for n in self.wanted_nodes if n not in alive]
            if missing:
                raise RayBackendError(f"these Ray nodes are not alive: {missing}; alive nodes: {sorted(alive)}")
        names = self.wanted_nodes if self.wanted_nodes is not None else list(alive)
        plans, too_small = [], []
        for node_id in names:
            plan = plan_node(
                node_id,
                alive[node_id].get("Resources", {}),
                resources,
                processes=self.spec.processes,
                concurrency=self.spec.concurrency,
            )
            if plan is None:
                too_small.append(node_id)
            else:
                plans.append(plan)
        if too_small:
            log.info("Ray nodes left out, too small for one %r server: %s", self.spec.env, too_small)
        if not plans:
            raise RayBackendError(
                f"no alive Ray node has room for one {self.spec.env!r} server ({resources.cpus_per_server:g} CPU, "
                f"{resources.memory_mib_per_server + resources.memory_mib_per_session:.0f} MiB; alive nodes: "
                f"{len(alive)}); start worker nodes with CPUs (`ray start --address=HEAD:6379 --num-cpus=N`), "
                "or lower cpus_per_server"
            )
        return plans

    def env_info(self) -> EnvInfo:
        """The env as the nodes' servers describe it."""
        for worker in self.workers:
            if worker.info is not None and worker.info.env_info is not None:
                return worker.info.env_info
        raise RayBackendError("the Ray rollout is not started: use `async with RayRollout(...)` or start()")

    async def tasks(self, split: str) -> TaskList:
        """The task ids of ``split``, listed by a ready node's servers."""
        for worker in self.workers:
            if worker.state is WorkerState.READY:
                listing: TaskList = await worker.handle.tasks.remote(split)
                return listing
        raise RayBackendError("no Ray node worker is ready to list the tasks; start() the rollout first")

    def stats(self) -> list[dict[str, Any]]:
        """One row per node worker: where it runs, its state, its servers, what it has done."""
        return [
            {
                "node_id": w.node_id,
                "state": w.state.value,
                "pid": w.info.pid if w.info else None,
                "server_urls": list(w.info.server_urls) if w.info else [],
                "server_pids": list(w.info.server_pids) if w.info else [],
                "processes": w.plan.processes if w.plan else None,
                "concurrency": w.plan.concurrency if w.plan else None,
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
        events: asyncio.Queue[Event] = asyncio.Queue()
        tasks: set[asyncio.Task[None]] = set()
        active = 0  # tasks whose last event has not been handled yet
        outstanding: Counter[Worker] = Counter()  # this stream's episodes handed to each worker, not yet back

        def window(worker: Worker) -> int:  # keep one batch waiting on every node
            return (worker.plan.concurrency if worker.plan else self.spec.concurrency) + self.batch_size

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
                ready = [w for w in self.workers if w.state is WorkerState.READY and outstanding[w] < window(w)]
                for worker in ready:
                    room = window(worker) - outstanding[worker]
                    size = min(self.batch_size, room, math.ceil(len(queue) / len(ready)))
                    batch = [queue.popleft() for _ in range(min(size, len(queue)))]
                    if batch:
                        outstanding[worker] += len(batch)
                        spawn(self._run_batch(ray, worker, batch, events))
                        progress = True

        hand_out()
        try:
            while active:
                event = await events.get()
                if isinstance(event, Finished):
                    outstanding[event.worker] -= 1
                    event.worker.episodes += 1
                    for trajectory in event.trajectories:
                        if trajectory.key in skip:  # a seat stored before a kill is not stored twice
                            continue
                        episode = episode_key(trajectory.key) if trajectory.key is not None else None
                        if episode is not None and losses[episode]:
                            trajectory.provenance["ray_worker_losses"] = losses[episode]
                        yield trajectory
                    continue
                active -= 1
                if isinstance(event, BatchEnded):
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
                elif isinstance(event, Recovered):
                    self._recovered(event)
                else:
                    why = reason(event.error)
                    raise RayBackendError(f"a node worker failed outside any episode: {why}") from event.error
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
        worker: Worker,
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

    def _recovered(self, event: Recovered) -> None:
        worker = event.worker
        if event.info is not None:
            log.info("Ray node worker on %s is back (pid %d)", worker.node_id, event.info.pid)
            worker.info, worker.state = event.info, WorkerState.READY
        else:
            log.warning("Ray node worker on %s is gone for good: %s", worker.node_id, event.error)
            worker.state, worker.last_error = WorkerState.DEAD, event.error

    async def _run_batch(
        self, ray: ModuleType, worker: Worker, batch: list[EpisodeRequest], events: asyncio.Queue[Event]
    ) -> None:
        unfinished = {r.key: r for r in batch}
        generator = worker.handle.run_batch.options(num_returns="streaming").remote(batch)
        try:
            async for ref in generator:
                key, trajectories = await ref
                unfinished.pop(key, None)
                await events.put(Finished(worker, trajectories))
        except _worker_lost(ray) as exc:
            await events.put(BatchEnded(worker, list(unfinished.values()), death=reason(exc)))
            return
        except asyncio.CancelledError:
            with contextlib.suppress(Exception):
                ray.cancel(generator)
            raise
        except Exception as exc:  # a bug in the worker, not an episode outcome: stop the run loudly
            await events.put(Crashed(exc))
            return
        await events.put(BatchEnded(worker, list(unfinished.values())))

    async def _recover(self, ray: ModuleType, worker: Worker, events: asyncio.Queue[Event]) -> None:
        """Wait for Ray's restart of a crashed worker and for its fresh servers; or learn it is gone."""
        deadline = asyncio.get_running_loop().time() + self.start_timeout_s
        while True:
            try:
                info = await asyncio.wait_for(
                    worker.handle.ready.remote(), timeout=deadline - asyncio.get_running_loop().time()
                )
            except ray.exceptions.ActorUnavailableError as exc:  # still restarting: ask again shortly
                if asyncio.get_running_loop().time() + 0.5 >= deadline:
                    await events.put(Recovered(worker, None, f"not back within {self.start_timeout_s:g}s: {exc}"))
                    return
                await asyncio.sleep(0.5)
            except Exception as exc:  # died for good, its node left, or its restart could not set up
                await events.put(Recovered(worker, None, reason(exc)))
                return
            else:
                await events.put(Recovered(worker, info))
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
            "concurrency (concurrency_per_node), each node builds the opponents (pass RayRollout(opponents=...) "
            "by agent name), and on_turn cannot run on another node"
        )
    unknown = sorted(set(options) - accepted)
    if unknown:
        raise AgenthubError(f"unknown executor_options {unknown}; accepted: {sorted(accepted)}")


def _worker_lost(ray: ModuleType) -> tuple[type[BaseException], ...]:
    """What a call to a worker raises when the worker is gone: its process died, or its whole node did
    (then Ray cannot place it again there: unschedulable, not an actor error)."""
    errors = ray.exceptions
    return (errors.RayActorError, errors.ActorUnschedulableError, errors.NodeDiedError)


async def _ignore_ray_errors(ray: ModuleType, ref: Any) -> None:
    with contextlib.suppress(ray.exceptions.RayError):
        await ref
