"""What a trajectory records of where and by whom it was played.

Every trajectory records the versions, the task, the horizon and the server
(:func:`episode_provenance`), and what its agent says of itself (:func:`agent_provenance`). Each
seat's trajectory of a multi-player episode records who played that seat
(:func:`seated_provenance`): ``role`` is ``agent`` for a seat of the agent under evaluation or
training, ``opponent`` for a seat of ``opponent=``; ``agent`` and ``agent_kwargs`` name the agent
that played that seat, so an opponent's trajectory never carries the evaluated agent's name.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agenthub._version import __version__
from agenthub.protocols import Agent
from agenthub.types import PROTOCOL_VERSION, EnvInfo, Task, TaskId

AGENT_IDENTITY = ("agent", "agent_kwargs")
"""The provenance keys that name the agent of a trajectory: an opponent's seat replaces them with its own."""


def episode_provenance(
    info: EnvInfo, task: Task, task_id: TaskId | None, max_turns: int, endpoint: str, extra: Mapping[str, Any]
) -> dict[str, Any]:
    """What a trajectory records of where it was played: versions, the task, the horizon, the server."""
    return {
        "agenthub_version": __version__,
        "protocol": PROTOCOL_VERSION,
        "env": info.name,
        "env_version": info.version,
        "task_id": task_id,
        "split": task.split,
        "seed": task.seed,
        "max_turns": max_turns,
        "endpoint": endpoint,
        **extra,
    }


def agent_provenance(agent: Agent) -> dict[str, Any]:
    """What the agent says of itself (its ``describe()``: model, sampling), when it can."""
    describe = getattr(agent, "describe", None)
    return dict(describe()) if callable(describe) else {}


def seated_provenance(
    provenance: Mapping[str, Any],
    agent: Agent,
    opponents: Mapping[int, Agent],
    players: int,
    opponent_identity: Mapping[int, Mapping[str, Any]] | None = None,
) -> dict[int, dict[str, Any]]:
    """What each seat's trajectory records of who played it.

    ``provenance`` is the run's (the agent's name and settings, the seating, the trainer...): the
    agent's seats keep it whole, with what ``agent`` says of itself, and ``role="agent"``. An opponent's
    seat keeps only its run-wide keys (not :data:`AGENT_IDENTITY`, nor the agent's ``describe()``), then
    what the opponent says of itself, then ``opponent_identity[seat]`` (its registered name and
    settings: ``{"agent": "oracle", "agent_kwargs": {...}}``), and ``role="opponent"``."""
    mine = {**agent_provenance(agent), **provenance, "role": "agent"}
    shared = {k: v for k, v in provenance.items() if k not in AGENT_IDENTITY}
    out: dict[int, dict[str, Any]] = {}
    for seat in range(players):
        opponent = opponents.get(seat)
        if opponent is None:
            out[seat] = dict(mine)
            continue
        # Without a registered name (a trainer's own Agent object), its class says who played.
        identity = {"agent": type(opponent).__name__, **(opponent_identity or {}).get(seat, {})}
        out[seat] = {**shared, **agent_provenance(opponent), **identity, "role": "opponent"}
    return out
