"""Registers the ``sciworld`` env and its ``sciworld-oracle`` agent; imports nothing heavy."""

from __future__ import annotations

from collections.abc import Callable

from agenthub import AgentSpec, EnvSpec, hookimpl

from . import __version__
from .tasks import SPLITS

SERVICE_DEFAULTS = {"max_sessions": 8, "idle_envs": 2, "ttl": 300.0}
"""Each session holds a JVM (100-200 MB resident; the heap is capped at 256 MB): at most 8 live sessions and
2 idle JVMs kept for reuse (a JVM start costs 1-3 s), and an abandoned session frees its JVM after 5 idle minutes."""


@hookimpl
def agenthub_register_envs(register: Callable[[EnvSpec], None]) -> None:
    register(
        EnvSpec(
            name="sciworld",
            factory="agenthub_env_sciworld.env:SciWorldEnv",
            splits=SPLITS,
            default_max_turns=30,
            description="ScienceWorld's elementary-science tasks (AgentGym's SciWorld, scienceworld 1.2.3); "
            "one JVM per session.",
            version=__version__,
            oracle="sciworld-oracle",
            service_defaults=SERVICE_DEFAULTS,
        )
    )


@hookimpl
def agenthub_register_agents(register: Callable[[AgentSpec], None]) -> None:
    register(
        AgentSpec(
            name="sciworld-oracle",
            factory="agenthub_env_sciworld.oracle:SciWorldOracle",
            description="Plays scienceworld's gold action sequence for the task, computed in a JVM of its own.",
            version=__version__,
            env="sciworld",
        )
    )
