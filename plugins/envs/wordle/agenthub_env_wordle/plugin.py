"""Registers the ``wordle`` environment and its oracle; reads no word list."""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources

from agenthub import AgentSpec, EnvSpec, hookimpl, measured_footprint

from agenthub_env_wordle.tasks import SPLITS

# The system prompt ships as data so that it can be read, diffed and overridden without code.
INSTRUCTIONS = resources.files(__package__).joinpath("prompts/system.md").read_text(encoding="utf-8")

MAX_ACTION_CHARS = 65_536
"""The guess is read after the reply's last "Action:" (AgentGym's "Thought: ... Action: ..." format), so a long
reasoning before it is a valid reply: twice agenthub's default. The parser is linear (benchmarks/action_parsing.py)."""


@hookimpl
def agenthub_register_envs(register: Callable[[EnvSpec], None]) -> None:
    register(
        EnvSpec(
            name="wordle",
            instructions=INSTRUCTIONS,
            factory="agenthub_env_wordle.env:WordleEnv",
            splits=SPLITS,
            default_max_turns=6,
            description="LMRL-Gym's Wordle (AgentGym): find a 5-letter word in 6 guesses from g/y/b feedback.",
            oracle="wordle-oracle",
            # Idle RSS and memory a session, as benchmarks/env_plugins.py measured them (footprints.json).
            footprint=measured_footprint(__package__, "wordle"),
            max_action_chars=MAX_ACTION_CHARS,
        )
    )


@hookimpl
def agenthub_register_agents(register: Callable[[AgentSpec], None]) -> None:
    register(
        AgentSpec(
            name="wordle-oracle",
            factory="agenthub_env_wordle.oracle:WordleOracle",
            description="Narrows the answer list from the feedback; solves every wordle task in 6 guesses.",
            env="wordle",
        )
    )
