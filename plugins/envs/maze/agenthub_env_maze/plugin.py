"""Registers the ``maze`` environment and its oracle; imports no game code."""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources

from agenthub import AgentSpec, EnvSpec, hookimpl

from agenthub_env_maze.tasks import SPLITS

# The system prompt ships as data so that it can be read, diffed and overridden without code.
INSTRUCTIONS = resources.files(__package__).joinpath("prompts/system.md").read_text(encoding="utf-8")


@hookimpl
def agenthub_register_envs(register: Callable[[EnvSpec], None]) -> None:
    register(
        EnvSpec(
            name="maze",
            instructions=INSTRUCTIONS,
            factory="agenthub_env_maze.env:MazeEnv",
            splits=SPLITS,
            default_max_turns=50,
            description="LMRL-Gym's maze (AgentGym): reach the goal with move up/down/left/right.",
            oracle="maze-oracle",
        )
    )


@hookimpl
def agenthub_register_agents(register: Callable[[AgentSpec], None]) -> None:
    register(
        AgentSpec(
            name="maze-oracle",
            factory="agenthub_env_maze.oracle:MazeOracle",
            description="Shortest path by breadth-first search; wins every maze task.",
            env="maze",
        )
    )
