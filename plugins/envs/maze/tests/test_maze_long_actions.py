"""Hostile replies of a megabyte: the move parser reads them in linear time, and a long reasoning before
"Action:" is still a move, up to the env's limit."""

from __future__ import annotations

from agenthub import EnvSpec
from agenthub.testing import MEGABYTE_PARSE_CPU_S, cpu_seconds_at_most, hostile_actions

from agenthub_env_maze.env import MazeEnv, parse_move
from agenthub_env_maze.plugin import MAX_ACTION_CHARS


def test_a_megabyte_of_hostile_text_is_read_promptly() -> None:
    env = MazeEnv()
    for shape, action in hostile_actions(1_000_000).items():
        env.reset(task_id=0)
        with cpu_seconds_at_most(MEGABYTE_PARSE_CPU_S, shape):  # linear: milliseconds; quadratic: hours
            move = parse_move(action)
            observation, _, _, _, info = env.step(action)
        assert move is None and info["invalid_action"] is True and len(observation) < 2_000, shape


def test_a_reply_with_long_reasoning_before_its_action_is_a_move_within_the_limit(maze_spec: EnvSpec) -> None:
    reasoning = "Thought: the goal is below me and the square to my right is a wall. " * 900
    reply = f"{reasoning}\n\nAction:\nmove down"
    assert 60_000 < len(reply) <= MAX_ACTION_CHARS == maze_spec.max_action_chars == maze_spec.info().max_action_chars
    assert parse_move(reply) == "move down"
