"""Registers the ``wordle`` environment and its oracle; reads no word list."""

from __future__ import annotations

from collections.abc import Callable

from agenthub import AgentSpec, EnvSpec, hookimpl

from agenthub_env_wordle.tasks import SPLITS


@hookimpl
def agenthub_register_envs(register: Callable[[EnvSpec], None]) -> None:
    register(
        EnvSpec(
            name="wordle",
            factory="agenthub_env_wordle.env:WordleEnv",
            splits=SPLITS,
            default_max_turns=6,
            description="LMRL-Gym's Wordle (AgentGym): find a 5-letter word in 6 guesses from g/y/b feedback.",
            oracle="wordle-oracle",
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
