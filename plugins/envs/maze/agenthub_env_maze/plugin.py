"""Registers the ``maze`` environment and its oracle; imports no game code."""

from __future__ import annotations

from collections.abc import Callable

from agenthub import AgentSpec, EnvSpec, hookimpl

from agenthub_env_maze.tasks import SPLITS


@hookimpl
def agenthub_register_envs(register: Callable[[EnvSpec], None]) -> None:
    register(
        EnvSpec(
            name="maze",
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
