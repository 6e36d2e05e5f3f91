"""The executor on a multi-player env, against a real ``tictactoe`` server: one agent per seat,
one trajectory per seat, win/draw/loss per seat, the seats a trainer keeps, and resume."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from agenthub import AgenthubError, LocalServer, Outcome, Task
from agenthub.builtin.agents import RandomAgent
from agenthub.builtin.tictactoe import TicTacToeOracle
from agenthub.evaluation import evaluate
from agenthub.rollout.collect import collect
from agenthub.rollout.executor import EpisodeRequest, Executor, episode_requests
from agenthub.rollout.pool import EnvPool
from agenthub.rollout.store import TRAJECTORIES_FILE, RunStore

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def tictactoe_url() -> Iterator[str]:
    with LocalServer("tictactoe") as server:
        yield server.url


def games(n: int) -> list[EpisodeRequest]:
    return episode_requests([Task(env="tictactoe", task_id=i) for i in range(n)])


@pytest.mark.parametrize("oracle_seat", [0, 1])
async def test_the_oracle_never_loses_to_random_from_either_seat(tictactoe_url: str, oracle_seat: int) -> None:
    opponent = 1 - oracle_seat
    async with EnvPool.from_urls([tictactoe_url]) as pool:
        executor = Executor(pool, TicTacToeOracle(), opponents={opponent: RandomAgent(seed=3)}, concurrency=8)
        trajectories = await executor.run(games(24))
    assert len(trajectories) == 48
    mine = [t for t in trajectories if t.seat == oracle_seat]
    assert len(mine) == 24 and all(t.seat_result in ("win", "draw") for t in mine), Counter(t.seat_result for t in mine)
    assert any(t.seat_result == "win" for t in mine)
    for t in mine:
        assert t.outcome is (Outcome.SUCCESS if t.seat_result == "win" else Outcome.FAILURE)
        assert t.key is not None and t.key.endswith(f"/seat{oracle_seat}")
        # a seat's trajectory holds only its own moves, each answered by what it saw next
        assert all(isinstance(turn.action, str) and turn.action.startswith("place ") for turn in t.turns)
        assert t.turns[-1].terminated and t.reward == sum(turn.reward for turn in t.turns)
        assert t.provenance["players"] == 2 and t.provenance["seat_returns"][str(oracle_seat)] == t.reward


async def test_each_seat_sees_its_own_game_first_observation_to_last(tictactoe_url: str) -> None:
    async with EnvPool.from_urls([tictactoe_url]) as pool:
        [x, o] = await Executor(pool, TicTacToeOracle()).run_episode(EpisodeRequest("0/0", Task(env="tictactoe")))
    assert (x.seat, o.seat, x.key, o.key) == (0, 1, "0/0/seat0", "0/0/seat1")
    assert "You play X" in x.first_observation and "X placed a mark" in o.first_observation
    assert len(x.turns) == 5 and len(o.turns) == 4  # perfect play draws: X moves five times, O four
    assert (x.seat_result, o.seat_result, x.reward, o.reward) == ("draw", "draw", 0.0, 0.0)
    assert x.turns[0].observation.startswith("O placed a mark")  # X's move is answered after O's reply
    assert x.turns[-1].observation.endswith("a draw.") and o.turns[-1].observation.endswith("a draw.")


async def test_self_play_eval_reports_win_draw_loss_per_seat(tictactoe_url: str) -> None:
    async with EnvPool.from_urls([tictactoe_url]) as pool:
        trajectories = await Executor(pool, RandomAgent(seed=11), concurrency=8).run(games(40))
    seats = evaluate(trajectories, k=1).overall()["seats"]
    assert set(seats) == {"0", "1"}
    assert seats["0"]["win"] == seats["1"]["loss"] and seats["0"]["draw"] == seats["1"]["draw"]
    assert seats["0"]["games"] == 40 and seats["0"]["unfinished"] == 0
    assert seats["0"]["win_rate"] + seats["0"]["draw_rate"] + seats["0"]["loss_rate"] == pytest.approx(1.0)
    assert seats["0"]["win"] > seats["0"]["loss"]  # moving first is an edge, even at random


async def test_a_trainer_keeps_only_the_seats_it_learns_from(tictactoe_url: str) -> None:
    async with EnvPool.from_urls([tictactoe_url]) as pool:
        executor = Executor(pool, TicTacToeOracle(), opponents={0: RandomAgent()}, seats={1})
        trajectories = await executor.run(games(6))
        assert [t.seat for t in trajectories] == [1] * 6
        with pytest.raises(AgenthubError, match=r"use Executor\.run_episode or Executor\.stream"):
            await executor.run_one(games(1)[0])
        with pytest.raises(AgenthubError, match="no seat 2 for an opponent"):
            await Executor(pool, TicTacToeOracle(), opponents={2: RandomAgent()}).run(games(1))


async def test_each_seat_records_who_played_it_and_only_the_agent_is_scored(tictactoe_url: str) -> None:
    async with EnvPool.from_urls([tictactoe_url]) as pool:
        executor = Executor(
            pool,
            RandomAgent(seed=2),
            opponents={1: TicTacToeOracle()},
            provenance={"agent": "random", "agent_kwargs": {"seed": 2}, "opponent": "oracle", "run_id": "r"},
            opponent_provenance={1: {"agent": "tictactoe-oracle", "agent_kwargs": {}}},
            concurrency=4,
        )
        trajectories = await executor.run(games(8))
        # Without a registered name (a trainer's own opponent object), its class names who played.
        unnamed = await Executor(
            pool, RandomAgent(), opponents={0: TicTacToeOracle()}, provenance={"agent": "random"}
        ).run(games(1))
    by_seat = {s: [t.provenance for t in trajectories if t.seat == s] for s in (0, 1)}
    assert all(p["role"] == "agent" and p["agent_kwargs"] == {"seed": 2} for p in by_seat[0])
    assert all(p["role"] == "opponent" and p["agent"] == "tictactoe-oracle" for p in by_seat[1])
    assert all(p["agent_kwargs"] == {} and p["run_id"] == "r" and p["opponent"] == "oracle" for p in by_seat[1])
    assert {(t.seat, t.provenance["role"], t.provenance["agent"]) for t in unnamed} == {
        (0, "opponent", "TicTacToeOracle"),
        (1, "agent", "random"),
    }
    report = evaluate(trajectories, k=1)
    overall = report.overall()
    assert (
        overall["samples"] == 8 and overall["success_rate"] == 0.0 and overall["opponent_trajectories_not_scored"] == 8
    )
    assert set(overall["seats"]) == {"0"} and set(overall["opponent_seats"]) == {"1"}
    assert overall["opponent_seats"]["1"]["win"] == overall["seats"]["0"]["loss"] and not report.self_play


async def test_in_self_play_every_seat_is_the_agent_s_and_scored(tictactoe_url: str) -> None:
    async with EnvPool.from_urls([tictactoe_url]) as pool:
        trajectories = await Executor(pool, RandomAgent(seed=7), provenance={"agent": "random"}).run(games(4))
    assert {(t.provenance["role"], t.provenance["agent"]) for t in trajectories} == {("agent", "random")}
    overall = evaluate(trajectories, k=1).overall()
    assert overall["samples"] == 8 and overall["self_play"] is True and "opponent_seats" not in overall
    assert overall["success_rate"] == round(sum(t.outcome is Outcome.SUCCESS for t in trajectories) / 8, 6)


async def test_resume_replays_only_an_episode_whose_seats_were_not_all_stored(
    tictactoe_url: str, tmp_path: Path
) -> None:
    requests = games(3)
    store = RunStore.create({"env": "tictactoe"}, root=tmp_path, run_id="r")
    async with EnvPool.from_urls([tictactoe_url]) as pool:
        executor = Executor(pool, TicTacToeOracle(), opponents={1: RandomAgent(seed=5)}, concurrency=1)
        await collect(executor, requests, store=store, progress=False)
        store.close()
        # A kill between the two seats of the last episode: its seat 1 is lost.
        file = store.path / TRAJECTORIES_FILE
        lines = file.read_bytes().splitlines(keepends=True)
        lost = [line for line in lines if b'"key":"2/0/seat1"' in line]
        file.write_bytes(b"".join(line for line in lines if line not in lost))
        resumed = RunStore.resume(store.path)
        assert "2/0" not in resumed.completed_keys() and {"0/0", "1/0", "2/0/seat0"} <= resumed.completed_keys()
        summary = await collect(executor, requests, store=resumed, progress=False)
        resumed.close()
    keys = [str(t.key) for t in resumed.trajectories()]
    assert sorted(keys) == sorted(f"{i}/0/seat{s}" for i in range(3) for s in (0, 1))
    assert summary.resumed == 2
