"""A multi-player env as a gymnasium.Env: it plays one seat, an opponent agent the others (issue 20)."""

from __future__ import annotations

import warnings
from collections.abc import Iterator

import pytest
from gymnasium.utils.env_checker import check_env

import agenthub
from agenthub import LocalServer, SyncEnvClient
from agenthub.builtin.tictactoe import best_cell
from agenthub.errors import ConfigError
from agenthub.types import AgentReply, EnvInfo, Observation, Task


class Scripted:
    """An opponent that plays the given cells in order."""

    def __init__(self, *cells: int) -> None:
        self.cells = cells

    def start_episode(self, task: Task, env: EnvInfo) -> Scripted.Episode:
        return Scripted.Episode(iter(self.cells))

    class Episode:
        def __init__(self, cells: Iterator[int]) -> None:
            self.cells = cells

        async def act(self, observation: Observation) -> AgentReply:
            return AgentReply(action=f"place {next(self.cells)}")


@pytest.fixture(scope="module")
def tictactoe() -> Iterator[LocalServer]:
    with LocalServer("tictactoe") as server:
        yield server


def test_the_gym_env_plays_o_against_the_oracle_to_a_draw() -> None:
    env = agenthub.make("tictactoe", opponent="oracle", seat=1, task_id=10_000)
    try:
        observation, info = env.reset()
        assert info["mark"] == "O" and observation.startswith("X placed a mark in cell 1.")  # the oracle moved first
        steps, done, reward = 0, False, 0.0
        while not done:
            observation, reward, terminated, truncated, info = env.step(f"place {best_cell(info['board'], 'O') + 1}")
            steps, done = steps + 1, terminated or truncated
            assert not truncated
        assert steps == 4 and reward == 0.0 and "The board is full: a draw." in observation
        with pytest.raises(Exception, match="the game is over; call reset"):
            env.step("place 1")
        assert env.reset()[1]["mark"] == "O"  # and again
    finally:
        env.close()


def test_each_seat_gets_its_own_reward_and_final_observation(tictactoe: LocalServer) -> None:
    with SyncEnvClient(tictactoe.url) as client:
        x = client.as_gym(opponent=Scripted(4, 5), task_id=10_000)  # plays X: the first row wins
        x.reset()
        assert x.step("place 1")[1:3] == (0.0, False)
        observation, _, _, _, info = x.step("nine")  # not a move: X is asked again, O does not move
        assert "I did not understand 'nine'" in observation and info["board"] == "X..O....."
        x.step("place 2")
        observation, reward, terminated, _, _ = x.step("place 3")
        assert (reward, terminated) == (1.0, True) and observation.endswith("you won.")
        x.close()

        o = client.as_gym(opponent=Scripted(1, 2, 3), seat=1, task_id=10_000)  # plays O and loses
        o.reset()
        o.step("place 4")
        observation, reward, terminated, _, _ = o.step("place 5")
        assert (reward, terminated) == (-1.0, True) and observation.endswith("you lost.")
        o.close()


def test_gymnasiums_checker_passes_with_an_opponent() -> None:
    env = agenthub.make("tictactoe", opponent="oracle")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # check_env warns that the env has no spec/render modes
            check_env(env, skip_render_check=True)
    finally:
        env.close()


def test_without_an_opponent_or_with_a_wrong_seat_it_is_refused_with_what_to_use(tictactoe: LocalServer) -> None:
    with pytest.raises(ConfigError) as refused:
        agenthub.make("tictactoe")  # refused before a server starts
    message = str(refused.value)
    assert "env 'tictactoe' has 2 seats (0 (X), 1 (O)) and a gymnasium env plays one of them" in message
    assert "agenthub.make('tictactoe', opponent='oracle', seat=0)" in message and "agenthub.EnvClient" in message
    with SyncEnvClient(tictactoe.url) as client:
        with pytest.raises(ConfigError, match="and a gymnasium env plays one of them"):
            client.as_gym()
        with pytest.raises(ConfigError, match=r"seat=2 does not exist"):
            client.as_gym(opponent="oracle", seat=2)
    with pytest.raises(ConfigError, match="env 'guess' is single-player; opponent= and seat= are for multi-player"):
        agenthub.make("guess", opponent="oracle")
