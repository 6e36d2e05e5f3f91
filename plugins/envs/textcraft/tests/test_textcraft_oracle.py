"""The oracle wins (nearly) every task, in-process and through a real server."""

from __future__ import annotations

import asyncio

import pytest

from agenthub import EnvClient, EnvInfo, Observation, Outcome, Task, play_episode
from agenthub_env_textcraft.env import TextCraftEnv
from agenthub_env_textcraft.oracle import TextCraftOracle, plan_actions
from agenthub_env_textcraft.splits import TEST_IDS, TRAIN_IDS

MAX_TURNS = 30
UNWINNABLE_IN_30_TURNS = {420: 36, 495: 48}
"""Anvil needs 31 iron ingots and netherite block 36 gold ingots, each crafted one at a time from nuggets."""

INFO = EnvInfo(name="textcraft", version="test", default_max_turns=MAX_TURNS, splits=["train", "test"])


async def play_in_process(env: TextCraftEnv, task_id: int, seed: int) -> tuple[bool, int]:
    """Play the oracle without a turn limit; return whether it won and how many turns it took."""
    text, info = env.reset(task_id=task_id, seed=seed)
    episode = TextCraftOracle().start_episode(Task(env="textcraft", task_id=task_id, seed=seed), INFO)
    observation = Observation(text=text, info=info)
    for turn in range(1, 100):
        text, reward, terminated, _, info = env.step((await episode.act(observation)).action)
        if terminated:
            return reward == 1.0, turn
        observation = Observation(text=text, info=info)
    return False, 100


@pytest.mark.anyio
@pytest.mark.parametrize("split, ids", [("train", TRAIN_IDS), ("test", TEST_IDS)], ids=["train", "test"])
async def test_oracle_wins_every_task_of_the_split_in_process(split: str, ids: list[int]) -> None:
    env = TextCraftEnv()
    turns = {}
    for task_id in ids:
        won, turns[task_id] = await play_in_process(env, task_id, seed=task_id)
        assert won, f"oracle lost {split} task {task_id}"
    too_long = {task_id: n for task_id, n in turns.items() if n > MAX_TURNS}
    assert too_long == {t: n for t, n in UNWINNABLE_IN_30_TURNS.items() if t in ids}


def test_oracle_plans_are_shortest_for_the_long_tasks() -> None:
    """The two tasks over 30 turns need that many crafts whatever the plan; the oracle wastes none."""
    env = TextCraftEnv()
    for task_id, turns in UNWINNABLE_IN_30_TURNS.items():
        observation, _ = env.reset(task_id=task_id, seed=0)
        plan = plan_actions(observation)
        assert len(plan) == turns
        assert sum(action.startswith("get ") for action in plan) == len({a for a in plan if a.startswith("get ")})


@pytest.mark.anyio
@pytest.mark.parametrize("split, ids", [("train", TRAIN_IDS), ("test", TEST_IDS)], ids=["train", "test"])
async def test_oracle_wins_through_a_real_server(server_url: str, split: str, ids: list[int]) -> None:
    sample = sorted({*ids[:: len(ids) // 12], *(set(UNWINNABLE_IN_30_TURNS) & set(ids))})
    async with EnvClient(server_url) as client:
        info = await client.info()
        for task_id in sample:
            task = Task(env="textcraft", task_id=task_id, split=split, seed=5)
            trajectory = await play_episode(client, TextCraftOracle(), task, env_info=info)
            expected = Outcome.TRUNCATED if task_id in UNWINNABLE_IN_30_TURNS else Outcome.SUCCESS
            assert trajectory.outcome == expected, (task_id, trajectory.error)
            if expected == Outcome.SUCCESS:
                assert trajectory.reward == 1.0 and len(trajectory.turns) <= MAX_TURNS


@pytest.mark.anyio
async def test_concurrent_sessions_play_as_they_do_one_by_one(server_url: str) -> None:
    tasks = [Task(env="textcraft", task_id=task_id, seed=seed) for task_id in TEST_IDS[::5] for seed in (0, 1)]

    async def transcript(client: EnvClient, task: Task) -> list[tuple[str, float, bool]]:
        trajectory = await play_episode(client, TextCraftOracle(), task)
        assert trajectory.outcome == Outcome.SUCCESS, trajectory.error
        return [(trajectory.first_observation, 0.0, False)] + [
            (turn.observation, turn.reward, turn.terminated) for turn in trajectory.turns
        ]

    async with EnvClient(server_url) as client:
        alone = [await transcript(client, task) for task in tasks]
        together = await asyncio.gather(*(transcript(client, task) for task in tasks))
    assert list(together) == alone
