"""Registers the ``babyai`` environment and its ``babyai-oracle`` agent.

Cheap to import: the factories are ``"module:attr"`` strings, so minigrid loads
only when an environment or the oracle is built.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources

from agenthub import AgentSpec, EnvSpec, hookimpl, measured_footprint

from agenthub_env_babyai import __version__
from agenthub_env_babyai.levels import SPLITS

DEFAULT_MAX_TURNS = 20
"""AgentGym-RL's turn limit for BabyAI."""

# The system prompt ships as data so that it can be read, diffed and overridden without code.
INSTRUCTIONS = resources.files(__package__).joinpath("prompts/system.md").read_text(encoding="utf-8")


@hookimpl
def agenthub_register_envs(register: Callable[[EnvSpec], None]) -> None:
    register(
        EnvSpec(
            name="babyai",
            instructions=INSTRUCTIONS,
            factory="agenthub_env_babyai.env:BabyAIEnv",
            splits=SPLITS,
            default_max_turns=DEFAULT_MAX_TURNS,
            description="BabyAI grid-world levels (minigrid) in text, with AgentGym's actions and task ids.",
            version=__version__,
            oracle="babyai-oracle",
            # Idle RSS and memory a session, as benchmarks/env_plugins.py measured them (footprints.json).
            footprint=measured_footprint(__package__, "babyai"),
        )
    )


@hookimpl
def agenthub_register_agents(register: Callable[[AgentSpec], None]) -> None:
    register(
        AgentSpec(
            name="babyai-oracle",
            factory="agenthub_env_babyai.oracle:BabyAIOracle",
            description="minigrid's BabyAI bot, replayed locally and mapped onto AgentGym's text actions.",
            version=__version__,
            env="babyai",
        )
    )
