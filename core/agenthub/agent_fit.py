"""Refuse, before a run, an agent that cannot play its env: one that picks among the env's
``available_actions`` (the ``random`` baseline) on an env that lists none would otherwise fail every
episode as ``agent_error`` and leave a table of zeros.

An agent says what it needs from the env's observations with a ``needs`` attribute (e.g.
``frozenset({"available_actions"})``). Whether an env gives it is seen, not declared: one real session
is created and its first observation looked at, then closed.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Protocol

from agenthub.errors import AgenthubError, ConfigError
from agenthub.plugins import get_plugin_host
from agenthub.service.client import EnvClient
from agenthub.types import Observation

AVAILABLE_ACTIONS = "available_actions"
WHAT_NEEDS_MEAN = {AVAILABLE_ACTIONS: "picks among the env's available_actions"}
"""How each need reads in a refusal: "agent 'random' picks among ..., and env 'x' gives none"."""


class _Players(Protocol):
    env: str
    opponent: str | None
    split: str | None


def needs_of(agent: object) -> frozenset[str]:
    """What ``agent`` needs from the env's observations (its ``needs`` attribute; none by default)."""
    needs = getattr(agent, "needs", None)
    return frozenset(needs) if isinstance(needs, frozenset | set | tuple | list) else frozenset()


def gives(observation: Observation, need: str) -> bool:
    """Whether ``observation`` gives what ``need`` names."""
    if need == AVAILABLE_ACTIONS:
        return bool(observation.available_actions)
    return need in observation.info


async def refuse_unfit_agents(
    client: EnvClient, config: _Players, agent_name: str, agent: object, opponents: Mapping[int, object]
) -> None:
    """Refuse the run if its agent or opponent needs what the env's first observation does not give."""
    players = [(agent_name, agent), *((config.opponent or "opponent", o) for o in opponents.values())]
    wanted = {name: needs_of(player) for name, player in players if needs_of(player)}
    if not wanted:
        return
    try:
        session = await client.create_session(split=config.split)
    except AgenthubError:
        return  # the run itself reports an env that cannot start a session, with its error
    try:
        first = Observation(text=session.observation, info=session.info)
    finally:
        with contextlib.suppress(AgenthubError):  # the probe's session expires on the server by itself
            await session.close()
    for name, needs in wanted.items():
        for need in sorted(needs):
            if not gives(first, need):
                raise ConfigError(_refusal(name, need, config.env))


def _refusal(agent: str, need: str, env: str) -> str:
    host = get_plugin_host()
    oracle = host.env(env).oracle
    # Which agents write their actions is each plugin's word (AgentSpec.writes_actions), not a list kept here.
    others = [f"agent={name}" for name in host.agents.names() if host.agents.get(name).writes_actions]
    if oracle:
        others.append(f"the env's oracle {oracle!r} (agent=oracle)")
    listed = " or ".join([", ".join(others[:-1]), others[-1]]) if len(others) > 1 else "".join(others)
    which = f" ({listed})" if listed else " (none is installed here: install an agent plugin that drives a model)"
    meaning = WHAT_NEEDS_MEAN.get(need, f"needs {need!r} in the env's observations")
    return f"agent {agent!r} {meaning}, and env {env!r} gives none; use an agent that writes actions{which}"
