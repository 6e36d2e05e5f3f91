"""What an env's servers cost on a node, and how many of them and how many sessions a node can hold.

A server is reserved the CPUs and memory of the env's footprint (``EnvSpec.footprint``, measured by its
plugin's benchmark: CPUs, resident memory with no session, and added per open session), the same figures
the Kubernetes manifests request; ``cpus_per_server`` and ``memory_mib_per_session`` override them. A node
worker reserves both from Ray, so Ray's own scheduler never places more than a node holds, and a
node too small for one server is left out of the run.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from agenthub.errors import AgenthubError
from agenthub.plugins import get_plugin_host
from agenthub.specs import FOOTPRINT_SLACK_MIB

MIB = 1024**2


@dataclass(frozen=True)
class EnvResources:
    """The cost of one env server process and of each session it holds."""

    cpus_per_server: float
    memory_mib_per_server: float
    """Resident memory with no session open, plus room for the HTTP stack."""
    memory_mib_per_session: float
    source: str

    def __post_init__(self) -> None:
        if self.cpus_per_server < 0 or self.memory_mib_per_server < 0 or self.memory_mib_per_session <= 0:
            raise AgenthubError(
                f"env resources must be >= 0 (memory per session > 0), got cpus_per_server={self.cpus_per_server}, "
                f"memory_mib_per_server={self.memory_mib_per_server}, "
                f"memory_mib_per_session={self.memory_mib_per_session}"
            )


def env_resources(
    env: str, *, cpus_per_server: float | None = None, memory_mib_per_session: float | None = None
) -> EnvResources:
    """``env``'s declared footprint, with the caller's overrides."""
    known = get_plugin_host().env(env).footprint
    # the overrides are checked by EnvResources, whose message names them
    return EnvResources(
        cpus_per_server=known.cpus if cpus_per_server is None else cpus_per_server,
        memory_mib_per_server=known.base_mib + FOOTPRINT_SLACK_MIB,
        memory_mib_per_session=known.per_session_mib if memory_mib_per_session is None else memory_mib_per_session,
        source=known.source if memory_mib_per_session is None else "memory_mib_per_session=",
    )


@dataclass(frozen=True)
class NodePlan:
    """What one node runs: its servers and how many episodes at once, and what it reserves from Ray."""

    node_id: str
    processes: int
    concurrency: int
    num_cpus: float
    memory_bytes: int


def plan_node(
    node_id: str, available: Mapping[str, float], resources: EnvResources, *, processes: int, concurrency: int
) -> NodePlan | None:
    """Fit ``processes`` servers and ``concurrency`` sessions into a node's ``available`` Ray resources
    (``CPU``, ``memory`` in bytes); fewer where it is smaller, None where not even one server fits."""
    cpus = float(available.get("CPU", 0.0))
    memory_mib = float(available.get("memory", 0.0)) / MIB
    if resources.cpus_per_server > 0:
        processes = min(processes, math.floor(cpus / resources.cpus_per_server + 1e-9))
    elif cpus <= 0:
        processes = 0  # a node that offers no CPU (a head kept for the driver) runs no servers
    if memory_mib > 0:
        per_server = resources.memory_mib_per_server + resources.memory_mib_per_session
        processes = min(processes, math.floor(memory_mib / per_server))
    if processes < 1:
        return None
    if memory_mib > 0:
        room = memory_mib - processes * resources.memory_mib_per_server
        concurrency = max(1, min(concurrency, math.floor(room / resources.memory_mib_per_session)))
    needed_mib = processes * resources.memory_mib_per_server + concurrency * resources.memory_mib_per_session
    return NodePlan(
        node_id=node_id,
        processes=processes,
        concurrency=concurrency,
        num_cpus=processes * resources.cpus_per_server,
        memory_bytes=math.ceil(needed_mib * MIB) if memory_mib > 0 else 0,
    )
