"""The one episode loop on multi-player envs, on real env servers on loopback: ``on_turn`` hears
every seat's turns, and a multi-player episode ends by the same rules as a single-player one
(a full context, the horizon, an end the env could not score)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from agenthub import (
    AgenthubError,
    AgentReply,
    EnvClient,
    EnvInfo,
    EnvSpec,
    Observation,
    Outcome,
    SeatStep,
    Task,
    TaskSplit,
    ThreadedServer,
    Turn,
    get_plugin_host,
    play_episode,
)
from agenthub.builtin.agents import GuessOracle, RandomAgent
from agenthub.builtin.tictactoe import TicTacToeOracle
from agenthub.rollout.executor import EpisodeRequest, Executor, episode_requests
from agenthub.rollout.pool import EnvPool
from agenthub.rollout.token_assembly import ContextLengthExceeded

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def tictactoe_url() -> Iterator[str]:
    with ThreadedServer(get_plugin_host().env("tictactoe")) as server:
        yield server.url


async def test_on_turn_hears_every_seat_of_a_multi_player_episode_under_its_trajectory_key(
    tictactoe_url: str,
) -> None:
    heard: list[tuple[str, int, Turn]] = []
    async with EnvPool.from_urls([tictactoe_url]) as pool:
        executor = Executor(pool, TicTacToeOracle(), on_turn=lambda *call: heard.append(call), concurrency=2)
        trajectories = await executor.run(episode_requests([Task(env="tictactoe", task_id=i) for i in range(2)]))
    assert len(trajectories) == 4
    for trajectory in trajectories:  # each seat's turns, in order, numbered from 1, as stored
        mine = [(number, turn) for key, number, turn in heard if key == trajectory.key]
        assert [number for number, _ in mine] == list(range(1, len(trajectory.turns) + 1))
        assert [turn for _, turn in mine] == trajectory.turns
    assert {key for key, _, _ in heard} == {"0/0/seat0", "0/0/seat1", "1/0/seat0", "1/0/seat1"}
    assert len(heard) == 18  # perfect play draws: X moves five times, O four, in each game


async def test_on_turn_keys_a_single_player_turn_by_its_episode() -> None:
    heard: list[tuple[str, int, str]] = []
    with ThreadedServer(get_plugin_host().env("guess")) as server:
        async with EnvPool.from_urls([server.url]) as pool:
            executor = Executor(
                pool, GuessOracle(), on_turn=lambda key, n, turn: heard.append((key, n, str(turn.action)))
            )
            [trajectory] = await executor.run([EpisodeRequest("7/2", Task(env="guess", task_id=3))])
        async with EnvClient(server.url) as client:  # play_episode: the same callback, with no key to tell
            played: list[tuple[str, int]] = []
            await play_episode(
                client, GuessOracle(), Task(env="guess", task_id=3), on_turn=lambda k, n, _: played.append((k, n))
            )
    assert heard == [("7/2", n + 1, turn.action) for n, turn in enumerate(trajectory.turns)]
    assert played == [("", n + 1) for n in range(len(trajectory.turns))]
    assert trajectory.seat is None and trajectory.key == "7/2" and "players" not in trajectory.provenance


class ContextFullAt:
    """The tictactoe oracle, until its ``fits``-th move does not fit its context."""

    def __init__(self, fits: int) -> None:
        self.fits = fits

    def start_episode(self, task: Task, env: EnvInfo) -> ContextFullAt:
        self.moves = 0
        self.oracle = TicTacToeOracle().start_episode(task, env)
        return self

    async def act(self, observation: Observation) -> AgentReply:
        self.moves += 1
        if self.moves > self.fits:
            raise ContextLengthExceeded("the next turn needs 4097 tokens; the context holds 4096")
        return await self.oracle.act(observation)


async def test_a_full_context_on_one_seat_truncates_every_seat_and_keeps_the_others_last_move(
    tictactoe_url: str,
) -> None:
    async with EnvPool.from_urls([tictactoe_url]) as pool:
        executor = Executor(pool, ContextFullAt(fits=1), opponents={1: TicTacToeOracle()})
        x, o = await executor.run_episode(EpisodeRequest("0/0", Task(env="tictactoe")))
    assert (x.outcome, o.outcome, x.seat_result, o.seat_result) == (Outcome.TRUNCATED,) * 2 + (None, None)
    assert x.trainable and x.error is None
    assert len(x.turns) == 1 and not x.turns[0].truncated  # X's move, answered by O's reply
    # O moved, then X could not: O's move stays, unanswered, rather than being dropped.
    assert len(o.turns) == 1 and o.turns[0].truncated and o.turns[0].observation == ""


async def test_the_horizon_counts_every_seat_s_steps_and_leaves_the_last_move_unanswered(tictactoe_url: str) -> None:
    async with EnvPool.from_urls([tictactoe_url]) as pool:
        x, o = await Executor(pool, TicTacToeOracle()).run_episode(
            EpisodeRequest("0/0", Task(env="tictactoe", max_turns=3))
        )
    assert x.outcome is o.outcome is Outcome.TRUNCATED and x.provenance["max_turns"] == 3
    assert len(x.turns) == 2 and len(o.turns) == 1  # X, O, X: three steps
    # O saw X's second move (its answer), as a single-player turn keeps the observation it got.
    assert o.turns[0].observation.startswith("X placed a mark") and not o.turns[0].truncated
    assert x.turns[-1].truncated and x.turns[-1].observation == ""  # X's last move: nothing answered it


class UnscoredDuel:
    """Two seats move once each; then the game ends, but the env cannot score it."""

    players = 2

    def reset(
        self, *, task_id: Any = None, seed: int | None = None, options: Mapping[str, Any] | None = None
    ) -> tuple[str, dict[str, Any], int]:
        return "seat 0: move", {"available_actions": ["move"]}, 0

    def step(self, seat: int, action: Any) -> SeatStep:
        if seat == 0:
            return SeatStep({1: "seat 1: move"}, {}, False, False, {"available_actions": ["move"]}, 1)
        info = {"not_evaluated": ["the judge is down"]}
        return SeatStep({0: "over", 1: "over"}, {0: 1.0, 1: -1.0}, True, False, info, 0)

    def close(self) -> None:
        pass


async def test_a_multi_player_end_the_env_could_not_score_is_env_error_for_every_seat() -> None:
    splits = {"test": TaskSplit.range(0, 1)}
    spec = EnvSpec(name="unscored-duel", factory=UnscoredDuel, splits=splits, default_max_turns=4, players=2)
    with ThreadedServer(spec) as server:
        async with EnvPool.from_urls([server.url]) as pool:
            trajectories = await Executor(pool, RandomAgent(), max_attempts=1).run_episode(
                EpisodeRequest("0/0", Task(env="unscored-duel", task_id=0))
            )
    assert [(t.seat, t.outcome, t.seat_result) for t in trajectories] == [
        (0, Outcome.ENV_ERROR, None),
        (1, Outcome.ENV_ERROR, None),
    ]
    assert all(t.error == "attempt 1: the env could not score this episode: the judge is down" for t in trajectories)
    assert [t.turns[-1].observation for t in trajectories] == ["over", "over"] and not trajectories[0].trainable


async def test_play_episode_refuses_a_multi_player_env_and_names_what_plays_one(tictactoe_url: str) -> None:
    async with EnvClient(tictactoe_url) as client:
        with pytest.raises(AgenthubError, match=r"2 seats.*Executor \(run_episode or stream\)"):
            await play_episode(client, TicTacToeOracle(), Task(env="tictactoe"))
