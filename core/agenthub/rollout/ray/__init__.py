"""The same run spread over a Ray cluster: env servers on every node, episodes shared out, one store.

* :mod:`.driver`: :class:`RayRollout` and :func:`collect_on_ray`, what a caller uses;
* :mod:`.env_servers`: :func:`launch_on_ray`, env servers on the nodes for an executor that runs
  elsewhere (a trainer's, whose policy stays in its process);
* :mod:`.actor`: :class:`NodeWorker`, the actor on each node (its env servers, agent, executor);
* :mod:`.events`: what the driver knows of each worker and hears from its batches;
* :mod:`.resources`: an env's footprint, and how much of it a node holds;
* :mod:`.errors`: importing Ray, connecting to a cluster, the errors.

Ray is optional (``pip install 'agenthub[ray]'``) and imported only when a
:class:`RayRollout` starts; importing this package does not import it. On one
machine :meth:`EnvPool.launch <agenthub.rollout.pool.EnvPool.launch>` is all that is needed.
From the command line: ``agenthub eval ... backend=ray address=auto``.

Example::

    summary = await collect_on_ray(
        "textcraft", "openai", episode_requests(tasks, samples=8), store=store,
        processes_per_node=4, concurrency_per_node=128, address="auto",
    )
"""

from __future__ import annotations

from agenthub.rollout.ray.actor import AgentFactory, NodeWorker, NodeWorkerInfo, NodeWorkerSpec
from agenthub.rollout.ray.driver import RayRollout, collect_on_ray
from agenthub.rollout.ray.env_servers import RayEnvPool, launch_on_ray
from agenthub.rollout.ray.errors import (
    NodeWorkerSetupError,
    RayBackendError,
    RayNotInstalledError,
    connect,
    import_ray,
)
from agenthub.rollout.ray.events import WorkerState
from agenthub.rollout.ray.resources import EnvResources, NodePlan, env_resources, plan_node

__all__ = [
    "AgentFactory",
    "EnvResources",
    "NodePlan",
    "NodeWorker",
    "NodeWorkerInfo",
    "NodeWorkerSetupError",
    "NodeWorkerSpec",
    "RayBackendError",
    "RayEnvPool",
    "RayNotInstalledError",
    "RayRollout",
    "WorkerState",
    "collect_on_ray",
    "connect",
    "env_resources",
    "import_ray",
    "launch_on_ray",
    "plan_node",
]
