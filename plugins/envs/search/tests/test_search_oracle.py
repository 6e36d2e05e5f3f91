"""The oracle and the one-search baseline through a real server, on samples of both splits."""

from __future__ import annotations

import asyncio

import pytest
from agenthub import EnvClient, Outcome, Task, play_episode

from agenthub_env_search.agents import OneSearchBaseline, SearchOracle
from agenthub_env_search.tasks import SPLITS


def sample(split: str, n: int) -> list[int]:
    ids = SPLITS[split]
    assert ids.start is not None
    return [ids.start + i * ids.count // n for i in range(n)]


async def success_rate(url: str, agent: SearchOracle | OneSearchBaseline, split: str, n: int) -> float:
    async with EnvClient(url) as client:
        info = await client.info()
        tasks = [Task(env="search", task_id=t, split=split, seed=0) for t in sample(split, n)]
        trajectories = await asyncio.gather(*(play_episode(client, agent, t, env_info=info) for t in tasks))
    return sum(t.outcome == Outcome.SUCCESS for t in trajectories) / n


@pytest.mark.anyio
@pytest.mark.parametrize("split", list(SPLITS))
async def test_the_oracle_wins_and_one_search_does_not(search_url: str, split: str) -> None:
    oracle = await success_rate(search_url, SearchOracle(), split, 40)
    baseline = await success_rate(search_url, OneSearchBaseline(), split, 40)
    assert oracle >= 0.95
    assert baseline <= 0.5  # multi-hop questions need more than one search
