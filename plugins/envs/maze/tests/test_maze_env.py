"""The maze environment in-process: rules, rewards, limits and determinism."""

from __future__ import annotations

import pytest

from agenthub_env_maze.env import MazeEnv, parse_move
from agenthub_env_maze.tasks import maze_for_task


@pytest.mark.parametrize(
    ("action", "move"),
    [
        ("move up", "move up"),
        ("  Move Down. ", "move down"),
        ("left", "move left"),
        ("Thought:\nThe goal is below.\n\nAction:\nmove right", "move right"),
        ("move diagonally", None),
        ("move up and left", None),
        ("", None),
    ],
)
def test_parse_move(action: str, move: str | None) -> None:
    assert parse_move(action) == move


def test_first_observation_states_task_and_actions() -> None:
    text, info = MazeEnv().reset(task_id=0)
    assert text.endswith(
        "The goal is at position 8, 6. Your current position is at position 1, 1. "
        "There are walls to your left, above you, below you."
    )
    assert '"move up", "move down", "move left", "move right"' in text
    assert info["available_actions"] == ["move up", "move down", "move left", "move right"]


def test_walking_into_a_wall_keeps_the_position() -> None:
    env = MazeEnv()
    env.reset(task_id=0)
    text, reward, terminated, truncated, _ = env.step("move up")
    assert "Your current position is at position 1, 1." in text
    assert (reward, terminated, truncated) == (0.0, False, False)


def test_shortest_path_wins_with_reward_one() -> None:
    env = MazeEnv()
    env.reset(task_id=0)
    path = maze_for_task(0).shortest_path()
    assert len(path) == 12
    rewards = []
    for action in path:
        text, reward, terminated, truncated, info = env.step(action)
        rewards.append(reward)
    assert rewards == [0.0] * 11 + [1.0]
    assert terminated and not truncated
    assert text == "Success. You reached the goal in 12 moves."
    assert info["won"] is True


def test_invalid_action_is_answered_in_the_envs_words_and_costs_a_move() -> None:
    env = MazeEnv()
    env.reset(task_id=4)
    text, reward, terminated, truncated, info = env.step("fly to the goal")
    assert text.startswith("'fly to the goal' is not a valid action. Your possible actions are \"move up\"")
    assert "Your current position is at position 1, 5." in text
    assert (reward, terminated, truncated) == (0.0, False, False)
    assert info["invalid_action"] is True and info["moves"] == 1


def test_running_out_of_moves_truncates() -> None:
    env = MazeEnv(max_steps=3)
    env.reset(task_id=0)
    results = [env.step("move left") for _ in range(3)]
    assert [r[3] for r in results] == [False, False, True]
    text, reward, terminated, _, info = results[-1]
    assert text == "Failure. You did not reach the goal within 3 moves."
    assert reward == 0.0 and not terminated and info["won"] is False
    assert env.step("move right")[0] == "The episode is over. Reset to play again."


def test_same_task_and_seed_replay_identically() -> None:
    actions = ["move right", "jump", "move down", "move left", "move up", "move down"]

    def play(task_id: int | None, seed: int | None) -> list[object]:
        env = MazeEnv()
        transcript: list[object] = [env.reset(task_id=task_id, seed=seed)]
        transcript += [env.step(a) for a in actions]
        return transcript

    assert play(1_007, 1) == play(1_007, 2)  # the maze depends on the task id only
    assert play(None, 123) == play(None, 123)
    assert play(None, 123)[0] != play(None, 456)[0]


def test_reset_reuses_an_instance_cleanly() -> None:
    env = MazeEnv()
    first = env.reset(task_id=10)
    env.step("move down")
    env.reset(task_id=1_500)
    assert env.reset(task_id=10) == first


def test_bad_resets_raise_value_error() -> None:
    env = MazeEnv()
    with pytest.raises(ValueError, match="unknown maze task id 25"):
        env.reset(task_id=25)
    with pytest.raises(ValueError, match="no reset options"):
        env.reset(task_id=0, options={"size": 9})
    with pytest.raises(ValueError, match="max_steps"):
        MazeEnv(max_steps=0)


def test_close_twice_is_harmless() -> None:
    env = MazeEnv()
    env.reset(task_id=0)
    env.close()
    env.close()
