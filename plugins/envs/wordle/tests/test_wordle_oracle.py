"""The solver oracle, in-process and through a real server; sessions side by side."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from agenthub import EnvClient, EnvSpec, Observation, Outcome, Task, play_episode

from agenthub_env_wordle.oracle import WordleOracle
from agenthub_env_wordle.tasks import SPLITS
from agenthub_env_wordle.words import answers


def sample(split: str, n: int) -> list[int]:
    """``n`` task ids spread over the whole split."""
    ids = SPLITS[split]
    assert ids.start is not None
    return [ids.start + i * ids.count // n for i in range(n)]


async def play_in_process(spec: EnvSpec, task_id: int) -> tuple[float, int]:
    env = spec.make()
    text, info = env.reset(task_id=task_id)
    episode = WordleOracle().start_episode(Task(env="wordle", task_id=task_id), spec.info())
    observation = Observation(text=text, info=info)
    for turn in range(1, spec.default_max_turns + 1):
        reply = await episode.act(observation)
        text, reward, terminated, truncated, info = env.step(reply.action)
        if terminated or truncated:
            return reward, turn
        observation = Observation(text=text, info=info)
    return 0.0, spec.default_max_turns


@pytest.mark.anyio
@pytest.mark.parametrize("split", list(SPLITS))
async def test_oracle_solves_every_sampled_task_in_process(wordle_spec: EnvSpec, split: str) -> None:
    results = [await play_in_process(wordle_spec, task_id) for task_id in sample(split, 80)]
    lost = [answers()[task_id] for task_id, (reward, _) in zip(sample(split, 80), results, strict=True) if reward < 1]
    assert lost == []
    assert sum(turns for _, turns in results) / len(results) < 4.0


@pytest.mark.anyio
@pytest.mark.parametrize("split", list(SPLITS))
async def test_oracle_wins_through_a_real_server(wordle_url: str, split: str) -> None:
    async with EnvClient(wordle_url) as client:
        info = await client.info()
        tasks = [Task(env="wordle", task_id=t, split=split, seed=0) for t in sample(split, 12)]
        trajectories = await asyncio.gather(*(play_episode(client, WordleOracle(), t, env_info=info) for t in tasks))
    assert [t.outcome for t in trajectories] == [Outcome.SUCCESS] * len(tasks)
    assert all(t.reward == 1.0 and len(t.turns) <= 6 for t in trajectories)


@pytest.mark.anyio
async def test_oracle_picks_up_a_task_chosen_by_the_server(wordle_url: str) -> None:
    async with EnvClient(wordle_url) as client:
        trajectory = await play_episode(client, WordleOracle(), Task(env="wordle", split="test", seed=11))
    assert trajectory.task.task_id in SPLITS["test"]
    assert trajectory.outcome is Outcome.SUCCESS


async def scripted_transcript(client: EnvClient, task_id: int) -> list[tuple[str, float, bool, bool]]:
    """A fixed mix of real and invalid guesses, played on its own session."""
    rows = []
    async with await client.create_session(task_id, seed=0) as session:
        rows.append((session.observation, 0.0, False, False))
        for action in ["c r a n e", "zzzzz", "pious", "light", "mound", "dwelt"]:
            result = await session.step(action)
            rows.append((result.observation, result.reward, result.terminated, result.truncated))
            if result.done:
                break
    return rows


@pytest.mark.anyio
async def test_concurrent_sessions_match_one_by_one(wordle_url: str) -> None:
    task_ids = [*sample("train", 12), *sample("test", 8)]
    async with EnvClient(wordle_url) as client:
        alone = [await scripted_transcript(client, t) for t in task_ids]
        together = await asyncio.gather(*(scripted_transcript(client, t) for t in task_ids))
    assert together == alone
    assert len({tuple(t) for t in alone}) > len(task_ids) // 2  # the tasks really differ


@pytest.mark.anyio
async def test_unknown_task_is_answered_422(wordle_url: str) -> None:
    async with httpx.AsyncClient(base_url=wordle_url) as raw:
        response = await raw.post("/v1/sessions", json={"task_id": 99_999})
    assert response.status_code == 422
    assert "unknown wordle task id 99999" in response.json()["error"]["message"]
