"""The walkthrough oracle wins through a real server, on every game and level of both splits."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from agenthub import AgenthubError, EnvClient, EnvInfo, Observation, Outcome, Task, play_episode
from agenthub_env_textworld.games import GameCache
from agenthub_env_textworld.oracle import TextWorldOracle
from agenthub_env_textworld.plugin import DEFAULT_MAX_TURNS
from agenthub_env_textworld.tasks import FAMILIES, game_spec, task_id

INFO = EnvInfo(name="textworld", version="test", default_max_turns=DEFAULT_MAX_TURNS, splits=["train", "test"])


SAMPLED_LEVELS = {"train": (2, 5), "test": (3, 5)}
"""Every family at two levels per split, the hardest in both; README.md has the rates over every level.
(Each game is generated on first use, about 2-4 s here, so the sample is kept small.)"""


def sample(split: str) -> list[int]:
    """Game 0 of every family at the split's sampled levels."""
    return [task_id(split, family, level, 0) for family in FAMILIES for level in SAMPLED_LEVELS[split]]


@pytest.mark.anyio
@pytest.mark.parametrize("split", ["train", "test"])
async def test_oracle_wins_every_family_through_a_real_server(textworld_url: str, split: str) -> None:
    async with EnvClient(textworld_url, timeout=300) as client:
        info = await client.info()
        tasks = [Task(env="textworld", task_id=tid, split=split, seed=0) for tid in sample(split)]
        # Together, so that the server generates the games in parallel.
        trajectories = await asyncio.gather(*(play_episode(client, TextWorldOracle(), t, env_info=info) for t in tasks))
    for task, trajectory in zip(tasks, trajectories, strict=True):
        spec = game_spec(task.task_id)
        assert trajectory.outcome == Outcome.SUCCESS, (spec.name, trajectory.error)
        assert trajectory.reward == pytest.approx(1.0)
        last = trajectory.turns[-1].info
        assert last["won"] is True and last["score"] == last["max_score"]
        assert len(trajectory.turns) <= DEFAULT_MAX_TURNS
    assert {game_spec(t.task_id).family for t in tasks} == set(FAMILIES)


@pytest.mark.anyio
async def test_concurrent_sessions_play_as_they_do_one_by_one(textworld_url: str) -> None:
    options = {"admissible_commands": True}
    tasks = [Task(env="textworld", task_id=tid, seed=1, options=options) for tid in sample("test")]
    assert len(tasks) == 6

    async def transcript(client: EnvClient, task: Task) -> list[object]:
        trajectory = await play_episode(client, TextWorldOracle(), task)
        assert trajectory.outcome == Outcome.SUCCESS, trajectory.error
        return [trajectory.first_observation] + [
            (turn.observation, turn.reward, turn.terminated, turn.info) for turn in trajectory.turns
        ]

    async with EnvClient(textworld_url, timeout=300) as client:
        alone = [await transcript(client, task) for task in tasks]
        together = await asyncio.gather(*(transcript(client, task) for task in tasks))
    assert list(together) == alone
    assert all("available_actions" in turn[3] for run in alone for turn in run[1:])  # type: ignore[index]


@pytest.mark.anyio
async def test_oracle_takes_the_walkthrough_from_info_when_the_env_sends_it(tmp_path: Path) -> None:
    """With the walkthrough in the first info the oracle needs no game of its own: its cache stays empty."""
    oracle = TextWorldOracle(cache_dir=tmp_path)
    episode = oracle.start_episode(Task(env="textworld", task_id=0), INFO)
    reply = await episode.act(Observation(text="start", info={"walkthrough": ["go east", "take coin"]}))
    assert reply.action == "go east"
    assert (await episode.act(Observation(text="-= Kitchen =-", info={}))).action == "take coin"
    assert os.listdir(tmp_path) == []


@pytest.mark.anyio
async def test_oracle_reads_the_walkthrough_from_its_cache_otherwise(cache: GameCache) -> None:
    tid = sample("train")[0]
    walkthrough = cache.walkthrough(game_spec(tid))
    episode = TextWorldOracle(cache_dir=cache.root).start_episode(Task(env="textworld", task_id=tid), INFO)
    actions = [(await episode.act(Observation(text="...", info={}))).action for _ in walkthrough]
    assert actions == walkthrough
    with pytest.raises(AgenthubError, match="is spent but the game is not won"):
        await episode.act(Observation(text="...", info={}))


@pytest.mark.anyio
async def test_oracle_stops_when_the_game_does_not_understand_it() -> None:
    episode = TextWorldOracle().start_episode(Task(env="textworld", task_id=0), INFO)
    await episode.act(Observation(text="start", info={"walkthrough": ["go east", "take coin"]}))
    with pytest.raises(AgenthubError, match="did not understand the walkthrough's command 'go east'"):
        await episode.act(Observation(text="That's not a verb I recognise.", info={"invalid_action": True}))


@pytest.mark.anyio
async def test_oracle_needs_a_textworld_task_id() -> None:
    episode = TextWorldOracle().start_episode(Task(env="textworld"), INFO)
    with pytest.raises(AgenthubError, match="needs the episode's task id"):
        await episode.act(Observation(text="start", info={}))


def test_oracle_refuses_other_envs() -> None:
    other = INFO.model_copy(update={"name": "textcraft"})
    with pytest.raises(AgenthubError, match="only plays env 'textworld'"):
        TextWorldOracle().start_episode(Task(env="textcraft", task_id=0), other)
