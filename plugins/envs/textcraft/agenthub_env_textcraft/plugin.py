"""Registers the ``textcraft`` env and its ``textcraft-oracle`` agent; imports nothing heavy."""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources

from agenthub import AgentSpec, EnvSpec, hookimpl, measured_footprint

from . import __version__
from .splits import SPLITS

# The system prompt ships as data so that it can be read, diffed and overridden without code.
INSTRUCTIONS = resources.files(__package__).joinpath("prompts/system.md").read_text(encoding="utf-8")

MAX_ACTION_CHARS = 4_096
"""The game refuses a reply that is not a command alone, and its longest commands are under 300 characters; its
refusals echo the action ("Could not execute ..."), so this also bounds the observation a long reply brings back."""


@hookimpl
def agenthub_register_envs(register: Callable[[EnvSpec], None]) -> None:
    register(
        EnvSpec(
            name="textcraft",
            instructions=INSTRUCTIONS,
            factory="agenthub_env_textcraft.env:TextCraftEnv",
            splits=SPLITS,
            default_max_turns=30,
            description="Craft a Minecraft item from listed recipes (AgentGym's TextCraft, textcraft 0.0.3).",
            version=__version__,
            oracle="textcraft-oracle",
            # Idle RSS and memory a session, as benchmarks/env_plugins.py measured them (footprints.json).
            footprint=measured_footprint(__package__, "textcraft"),
            inline_calls=True,  # pure Python: a step takes ~15 µs, less than a hop to a thread
            max_action_chars=MAX_ACTION_CHARS,
        )
    )


@hookimpl
def agenthub_register_agents(register: Callable[[AgentSpec], None]) -> None:
    register(
        AgentSpec(
            name="textcraft-oracle",
            factory="agenthub_env_textcraft.oracle:TextCraftOracle",
            description="Plans every get and craft from the listed recipes; wins every textcraft task.",
            version=__version__,
            env="textcraft",
        )
    )
