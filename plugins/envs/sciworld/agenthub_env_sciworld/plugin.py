"""Registers the ``sciworld`` env and its ``sciworld-oracle`` agent; imports nothing heavy."""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources

from agenthub import AgentSpec, EnvSpec, hookimpl, measured_footprint

from . import __version__
from .tasks import SPLITS

# The system prompt ships as data so that it can be read, diffed and overridden without code.
INSTRUCTIONS = resources.files(__package__).joinpath("prompts/system.md").read_text(encoding="utf-8")

SERVICE_DEFAULTS = {"max_sessions": 8, "idle_envs": 2, "ttl": 300.0}
"""Sessions are packed 8 to a JVM (about 250 MB resident for 8; the heap is capped at 256 MB): at most 8 live
sessions unless the user raises ``max_sessions``, 2 idle instances kept for reuse, and an abandoned session frees
its place after 5 idle minutes."""
MAX_ACTION_CHARS = 4_096
"""ScienceWorld's parser refuses a reply that is not an action alone, and its actions are under 100 characters;
the JVM takes about 2 µs a character of input (2 s for 1 MB) while holding the lock its 8 sessions share."""


@hookimpl
def agenthub_register_envs(register: Callable[[EnvSpec], None]) -> None:
    register(
        EnvSpec(
            name="sciworld",
            instructions=INSTRUCTIONS,
            factory="agenthub_env_sciworld.env:SciWorldEnv",
            splits=SPLITS,
            default_max_turns=30,
            description="ScienceWorld's elementary-science tasks (AgentGym's SciWorld, scienceworld 1.2.3); "
            "sessions packed 8 to a JVM.",
            version=__version__,
            oracle="sciworld-oracle",
            # The idle server's RSS (benchmarks/env_plugins.py) and a session's share of a warm packed JVM
            # (benchmarks/sciworld_packing.py), as env_plugins.py --write-footprints declared them (footprints.json).
            footprint=measured_footprint(__package__, "sciworld"),
            service_defaults=SERVICE_DEFAULTS,
            max_action_chars=MAX_ACTION_CHARS,
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
