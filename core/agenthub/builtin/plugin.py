"""Registers the built-in environment and agents through the public hooks."""

from __future__ import annotations

from collections.abc import Callable

from agenthub._version import __version__
from agenthub.hookimpl import hookimpl
from agenthub.measured_footprints import measured_footprint
from agenthub.specs import AgentSpec, EnvSpec, HorizonSpec

from . import guess, tictactoe, trail


@hookimpl
def agenthub_register_envs(register: Callable[[EnvSpec], None]) -> None:
    register(
        EnvSpec(
            name="guess",
            factory="agenthub.builtin.guess:GuessNumberEnv",
            splits=guess.SPLITS,
            default_max_turns=8,
            description="Find a secret number from 1 to 16 with higher/lower feedback (built in).",
            version=__version__,
            oracle="guess-oracle",
            # Idle RSS and memory a session, as benchmarks/env_plugins.py measured them (footprints.json).
            footprint=measured_footprint(__package__, "guess"),
            inline_calls=True,  # pure Python: a step takes a few µs, less than a hop to a thread
            instructions=(
                "You are playing a number-guessing game. Each turn, answer with exactly one action of the "
                "form 'guess <number>' and nothing else; use the feedback (too low, too high) to find the number."
            ),
        )
    )
    register(
        EnvSpec(
            name="trail",
            factory="agenthub.builtin.trail:TrailEnv",
            splits=trail.SPLITS,
            default_max_turns=3,
            description="Follow the signs past 3 forks (built in; a tiny model learns it on a CPU).",
            version=__version__,
            oracle="trail-oracle",
            # Idle RSS and memory a session, as benchmarks/env_plugins.py measured them (footprints.json).
            footprint=measured_footprint(__package__, "trail"),
            # benchmarks/results/trl_seeds.json: the default run over seeds.
            cpu_recipe=(
                "the default run (agenthub run trainer=trl env=trail) learns it in minutes "
                "(per seed in docs/benchmarks.md)"
            ),
            instructions=trail.INSTRUCTIONS,
            # A move is the first left/right anywhere in the reply, so a long reply with reasoning is a move.
            max_action_chars=trail.MAX_ACTION_CHARS,
        )
    )
    register(
        EnvSpec(
            name="tictactoe",
            factory="agenthub.builtin.tictactoe:TicTacToeEnv",
            splits=tictactoe.SPLITS,
            # the game takes at most 9 moves; the rest allows for unreadable or illegal moves
            default_max_turns=20,
            description="Tic-tac-toe for two seats, X then O (built in; a multi-player env).",
            version=__version__,
            oracle="tictactoe-oracle",
            inline_calls=True,  # pure Python: a move takes microseconds
            instructions=tictactoe.INSTRUCTIONS,
            players=2,
            seats=tictactoe.MARKS,
        )
    )


@hookimpl
def agenthub_register_agents(register: Callable[[AgentSpec], None]) -> None:
    register(
        AgentSpec(
            name="guess-oracle",
            factory="agenthub.builtin.agents:GuessOracle",
            description="Binary search; wins every guess task.",
            version=__version__,
            env="guess",
        )
    )
    register(
        AgentSpec(
            name="trail-oracle",
            factory="agenthub.builtin.trail:TrailOracle",
            description="Follows every sign; wins every trail task.",
            version=__version__,
            env="trail",
        )
    )
    register(
        AgentSpec(
            name="tictactoe-oracle",
            factory="agenthub.builtin.tictactoe:TicTacToeOracle",
            description="Minimax; never loses a tictactoe game, from either seat.",
            version=__version__,
            env="tictactoe",
        )
    )
    register(
        AgentSpec(
            name="random",
            factory="agenthub.builtin.agents:RandomAgent",
            description="Uniform over info['available_actions'].",
            version=__version__,
        )
    )


@hookimpl
def agenthub_register_horizons(register: Callable[[HorizonSpec], None]) -> None:
    module = "agenthub.rollout.horizon"
    register(HorizonSpec("fixed", f"{module}:FixedHorizon", "the same turn limit at every step: turns=30"))
    register(HorizonSpec("stepwise", f"{module}:StepwiseHorizon", "ScalingInter-RL: rounds=[10,20,30] every=100"))
    register(HorizonSpec("linear", f"{module}:LinearHorizon", "from start to end turns over steps: start end steps"))
