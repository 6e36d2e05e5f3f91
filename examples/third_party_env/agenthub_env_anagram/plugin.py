"""Registers the ``anagram`` env and its oracle: the module named by the ``agenthub`` entry point."""

from __future__ import annotations

from collections.abc import Callable
from importlib.resources import files

from agenthub import AgentSpec, EnvSpec, hookimpl

from agenthub_env_anagram import __version__
from agenthub_env_anagram.env import SPLITS


@hookimpl
def agenthub_register_envs(register: Callable[[EnvSpec], None]) -> None:
    register(
        EnvSpec(
            name="anagram",
            # "module:attribute" strings are imported on first use, so listing plugins stays fast.
            factory="agenthub_env_anagram.env:AnagramEnv",
            splits=SPLITS,
            default_max_turns=2,
            description="Unscramble a word (an outside author's plugin, made with agenthub init).",
            version=__version__,
            oracle="anagram-oracle",
            instructions=files("agenthub_env_anagram").joinpath("prompts/system.md").read_text(encoding="utf-8"),
        )
    )


@hookimpl
def agenthub_register_agents(register: Callable[[AgentSpec], None]) -> None:
    register(
        AgentSpec(
            name="anagram-oracle",
            factory="agenthub_env_anagram.oracle:AnagramOracle",
            description="Finds the word with the same letters; wins every anagram task.",
            version=__version__,
            env="anagram",
        )
    )
