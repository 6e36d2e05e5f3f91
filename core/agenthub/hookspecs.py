"""The pluggy hooks a plugin may implement.

Every hook receives a ``register`` callback, so one plugin can contribute
several things and the host can tell who registered what (see ``llm``'s
``register_models``). Implement a hook with ``@agenthub.hookimpl``.
"""

from __future__ import annotations

from collections.abc import Callable

import pluggy

from agenthub.specs import AgentSpec, CommandSpec, EnvSpec, HorizonSpec, TrainerSpec

hookspec = pluggy.HookspecMarker("agenthub")


@hookspec
def agenthub_register_envs(register: Callable[[EnvSpec], None]) -> None:
    """Register environments: call ``register(EnvSpec(...))`` once per environment.

    Keep this cheap: give ``EnvSpec.factory`` as a ``"module:attr"`` string so
    the environment's heavy dependencies load only when it is used.
    """


@hookspec
def agenthub_register_agents(register: Callable[[AgentSpec], None]) -> None:
    """Register agents (policies): call ``register(AgentSpec(...))`` once per agent.

    An environment plugin registers its oracle here and names it in ``EnvSpec.oracle``.
    """


@hookspec
def agenthub_register_trainers(register: Callable[[TrainerSpec], None]) -> None:
    """Register trainer backends: call ``register(TrainerSpec(...))`` once per trainer."""


@hookspec
def agenthub_register_commands(register: Callable[[CommandSpec], None]) -> None:
    """Register ``agenthub`` sub-commands: call ``register(CommandSpec(...))`` once per command."""


@hookspec
def agenthub_register_horizons(register: Callable[[HorizonSpec], None]) -> None:
    """Register horizon schedules (turn limits per training step): ``register(HorizonSpec(...))``.

    ``horizon.kind=NAME`` then builds ``factory(**the other horizon.* keys)``;
    the result must be a pure function of the step (see ``HorizonSchedule``).
    """
