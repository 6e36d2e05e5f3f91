"""Env servers placed on a Ray cluster's nodes, for an executor that runs elsewhere (a trainer's).

A trainer's policy lives in the trainer's process (its model on its GPU), so there the executor
stays, and only the env servers go out to the cluster: one actor per node starts that node's
``agenthub serve`` processes, listening on the node's address, and the trainer's
:class:`~agenthub.rollout.pool.EnvPool` reaches them over HTTP like any URL. How many servers and
sessions each node holds follows the env's footprint and the node's resources
(:mod:`agenthub.rollout.ray.resources`). A node that is lost takes its servers with it; the pool's
health checks avoid them and the executor retries the episodes they held on the others
(``max_attempts``), recording the failures as infrastructure outcomes.

Servers reachable from the network are protected by a bearer token: the caller's, or a new random one.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from agenthub.rollout.pool import Endpoint, EnvPool
from agenthub.rollout.ray.errors import RayBackendError, connect, import_ray, reason
from agenthub.rollout.ray.resources import env_resources, plan_node
from agenthub.service.client import EnvClient
from agenthub.service.launcher import LocalServer


class NodeEnvServers:
    """The Ray actor on one node that keeps its env server processes, listening on the node's address."""

    def __init__(self, env: str, processes: int, overrides: Mapping[str, Any]) -> None:
        self.env, self.processes, self.overrides = env, processes, dict(overrides)
        self.servers: list[LocalServer] = []

    def start(self) -> list[str]:
        """Start the servers; their URLs as other machines reach them."""
        node_ip: str = import_ray().util.get_node_ip_address()
        self.servers = [
            LocalServer(self.env, overrides={**self.overrides, "host": "0.0.0.0"}) for _ in range(self.processes)
        ]
        urls = []
        for server in self.servers:
            server.start()
            port = urlsplit(server.url).port
            urls.append(f"http://{node_ip}:{port}")
        return urls

    def stop(self) -> None:
        for server in self.servers:
            server.stop()
        self.servers = []


class RayEnvPool(EnvPool):
    """An :class:`EnvPool` over env servers that Ray actors keep on the cluster's nodes; closing it stops them,
    and disconnects from Ray (stopping a one-machine Ray) when :func:`launch_on_ray` was the one to connect."""

    actors: list[Any]
    owns_ray: bool = False

    async def close(self) -> None:
        await super().close()
        ray = import_ray()
        for actor in self.actors:
            with contextlib.suppress(Exception):  # gone with its node
                await asyncio.wait_for(actor.stop.remote(), timeout=30)
            with contextlib.suppress(Exception):
                ray.kill(actor)
        self.actors = []
        if self.owns_ray:
            self.owns_ray = False
            ray.shutdown()


async def launch_on_ray(
    env: str,
    *,
    address: str | None = None,
    processes_per_node: int = 1,
    capacity: int = 64,
    overrides: Mapping[str, Any] | None = None,
    start_timeout_s: float = 300.0,
) -> RayEnvPool:
    """Start ``env``'s servers on every Ray node with room for one and pool them (``capacity`` sessions a server).

    Where this process was not connected to Ray yet, this call connects (to ``address``, or to a new
    one-machine Ray) and the pool's ``close()`` disconnects again, stopping a Ray it started; a connection
    the caller made stays the caller's."""
    ray, owned = connect(address)
    try:
        pool = await _start_servers(ray, env, processes_per_node, capacity, overrides, start_timeout_s)
    except BaseException:
        if owned:  # a Ray this call started or joined goes with the servers that could not start
            ray.shutdown()
        raise
    pool.owns_ray = owned
    return pool


async def _start_servers(
    ray: Any,
    env: str,
    processes_per_node: int,
    capacity: int,
    overrides: Mapping[str, Any] | None,
    start_timeout_s: float,
) -> RayEnvPool:
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    settings = dict(overrides or {})
    token = settings.setdefault("token", secrets.token_urlsafe(24))
    settings.setdefault("max_sessions", capacity)
    resources = env_resources(env)
    plans = [
        plan
        for node in ray.nodes()
        if node.get("Alive")
        and (
            plan := plan_node(
                node["NodeID"],
                node.get("Resources", {}),
                resources,
                processes=processes_per_node,
                concurrency=capacity * processes_per_node,
            )
        )
        is not None
    ]
    if not plans:
        raise RayBackendError(
            f"no alive Ray node has room for one {env!r} server ({resources.cpus_per_server:g} CPU); start worker "
            "nodes with CPUs (`ray start --address=HEAD:6379 --num-cpus=N`)"
        )
    actor_class = ray.remote(NodeEnvServers)
    actors = [
        actor_class.options(
            scheduling_strategy=NodeAffinitySchedulingStrategy(node_id=plan.node_id, soft=False),
            num_cpus=plan.num_cpus,
            memory=plan.memory_bytes or None,
        ).remote(env, plan.processes, settings)
        for plan in plans
    ]
    try:
        started = await asyncio.wait_for(
            asyncio.gather(*(actor.start.remote() for actor in actors), return_exceptions=True), start_timeout_s
        )
    except TimeoutError:
        started = [TimeoutError(f"not started within {start_timeout_s:g}s")] * len(actors)
    failures = [
        f"node {p.node_id}: {reason(r)}" for p, r in zip(plans, started, strict=True) if isinstance(r, BaseException)
    ]
    if failures:
        for actor in actors:
            with contextlib.suppress(Exception):
                ray.kill(actor)
        raise RayBackendError(f"env servers could not start on the Ray nodes: {'; '.join(failures)}")
    urls = [url for batch in started for url in batch]  # type: ignore[union-attr]
    endpoints = [Endpoint(url, EnvClient(url, token=token, max_connections=max(capacity, 8)), capacity) for url in urls]
    pool = RayEnvPool(endpoints, restart=False)
    pool.actors = actors
    return pool
