"""Registers the ``maze`` environment and its oracle; imports no game code."""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources

from agenthub import AgentSpec, EnvSpec, hookimpl, measured_footprint

from agenthub_env_maze.tasks import SPLITS

# The system prompt ships as data so that it can be read, diffed and overridden without code.
INSTRUCTIONS = resources.files(__package__).joinpath("prompts/system.md").read_text(encoding="utf-8")

MAX_ACTION_CHARS = 65_536
"""The move is read after the reply's last "Action:" (AgentGym's "Thought: ... Action: ..." format), so a long
reasoning before it is a valid reply: twice agenthub's default. The parser is linear (benchmarks/action_parsing.py)."""


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
            # Idle RSS and memory a session, as benchmarks/env_plugins.py measured them (footprints.json).
            footprint=measured_footprint(__package__, "maze"),
            # benchmarks/results/agentgym_recipe.json: 5 seeds, the SFT start and GRPO's gain over it. No figure
            # here: a re-run would outdate it, and the page renders the current one.
            cpu_recipe=(
                "examples/agentgym_recipe (SFT on the oracle's wins, then GRPO) learns part of it "
                "(test success per seed in docs/benchmarks.md)"
            ),
            max_action_chars=MAX_ACTION_CHARS,
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
