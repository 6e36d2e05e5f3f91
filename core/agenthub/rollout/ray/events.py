"""The driver's view of its node workers, and what their batches report back to it."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

from agenthub.rollout.executor import EpisodeRequest
from agenthub.rollout.ray.actor import NodeWorkerInfo
from agenthub.rollout.ray.resources import NodePlan
from agenthub.types import Trajectory


class WorkerState(enum.StrEnum):
    STARTING = "starting"
    READY = "ready"
    RECOVERING = "recovering"
    """It died while running episodes; waiting to see whether Ray restarted it."""
    DEAD = "dead"


@dataclass(eq=False)
class Worker:
    """One node worker as the driver tracks it."""

    node_id: str
    handle: Any
    plan: NodePlan | None = None
    state: WorkerState = WorkerState.STARTING
    info: NodeWorkerInfo | None = None
    episodes: int = 0
    deaths: int = 0
    last_error: str | None = None


@dataclass(frozen=True)
class Finished:
    """An episode ended on ``worker``: its trajectory, or one per seat of a multi-player env."""

    worker: Worker
    trajectories: list[Trajectory]


@dataclass(frozen=True)
class BatchEnded:
    """A batch's stream ended, normally or with its worker's death."""

    worker: Worker
    unfinished: list[EpisodeRequest]
    """Requests of the batch that got no trajectory: the worker died before it sent them."""
    death: str | None = None


@dataclass(frozen=True)
class Recovered:
    """Ray restarted a dead worker and it set itself up again (``info``), or it is gone (``error``)."""

    worker: Worker
    info: NodeWorkerInfo | None
    error: str | None = None


@dataclass(frozen=True)
class Crashed:
    """A worker failed outside any episode: a bug, which stops the run."""

    error: BaseException


Event = Finished | BatchEnded | Recovered | Crashed
