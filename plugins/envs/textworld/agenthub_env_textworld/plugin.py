"""Registers the ``textworld`` env and its ``textworld-oracle`` agent; imports nothing heavy."""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources

from agenthub import AgentSpec, EnvSpec, hookimpl, measured_footprint

from . import __version__
from .tasks import SPLITS

# The system prompt ships as data so that it can be read, diffed and overridden without code.
INSTRUCTIONS = resources.files(__package__).joinpath("prompts/system.md").read_text(encoding="utf-8")

DEFAULT_MAX_TURNS = 50
"""The longest walkthrough of the hardest level (cooking 5) takes 45 commands; see the README."""


@hookimpl
def agenthub_register_envs(register: Callable[[EnvSpec], None]) -> None:
    register(
        EnvSpec(
            name="textworld",
            instructions=INSTRUCTIONS,
            factory="agenthub_env_textworld.env:TextWorldEnv",
            splits=SPLITS,
            default_max_turns=DEFAULT_MAX_TURNS,
            description=(
                "TextWorld text adventures (textworld 1.7.0) generated per task id: cooking, "
                "treasure hunter and coin collector, five levels each."
            ),
            version=__version__,
            oracle="textworld-oracle",
            # Idle RSS and memory a session, as benchmarks/env_plugins.py measured them (footprints.json).
            footprint=measured_footprint(__package__, "textworld"),
            # A reset on a cold cache generates its game (seconds), and a burst of them queues behind the
            # few generator workers; 300 s, the default, can run out before the last one's turn.
            service_defaults={"step_timeout": 900.0},
        )
    )


@hookimpl
def agenthub_register_agents(register: Callable[[AgentSpec], None]) -> None:
    register(
        AgentSpec(
            name="textworld-oracle",
            factory="agenthub_env_textworld.oracle:TextWorldOracle",
            description="Plays TextWorld's own walkthrough of the game, one command per turn.",
            version=__version__,
            env="textworld",
        )
    )
