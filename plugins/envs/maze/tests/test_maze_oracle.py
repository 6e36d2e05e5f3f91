"""The BFS oracle, in-process and through a real server; sessions side by side."""

from __future__ import annotations

import asyncio

import pytest
from agenthub import EnvClient, EnvSpec, Observation, Outcome, Task, play_episode

from agenthub_env_maze.oracle import MazeOracle
from agenthub_env_maze.tasks import SPLITS, maze_for_task

SAMPLE = {"train": 60, "test": 25, "test-random": 30}


def sample_tasks() -> list[tuple[str, int]]:
    return [(name, int(task_id)) for name, n in SAMPLE.items() for task_id in SPLITS[name].first(n)]


async def play_in_process(spec: EnvSpec, task_id: int) -> tuple[float, int]:
    env = spec.make()
    text, info = env.reset(task_id=task_id)
    episode = MazeOracle().start_episode(Task(env="maze", task_id=task_id), spec.info())
    observation = Observation(text=text, info=info)
    for turn in range(1, spec.default_max_turns + 1):
        reply = await episode.act(observation)
        text, reward, terminated, truncated, info = env.step(reply.action)
        if terminated or truncated:
            return reward, turn
        observation = Observation(text=text, info=info)
    return 0.0, spec.default_max_turns


@pytest.mark.anyio
@pytest.mark.parametrize(("split", "task_id"), sample_tasks(), ids=[f"{s}-{t}" for s, t in sample_tasks()])
async def test_oracle_wins_in_process_by_the_shortest_path(maze_spec: EnvSpec, split: str, task_id: int) -> None:
    reward, turns = await play_in_process(maze_spec, task_id)
    assert reward == 1.0
    assert turns == len(maze_for_task(task_id).shortest_path())


@pytest.mark.anyio
@pytest.mark.parametrize("split", list(SAMPLE))
async def test_oracle_wins_through_a_real_server(maze_url: str, split: str) -> None:
    async with EnvClient(maze_url) as client:
        info = await client.info()
        tasks = [Task(env="maze", task_id=t, split=split, seed=0) for t in SPLITS[split].first(10)]
        trajectories = await asyncio.gather(*(play_episode(client, MazeOracle(), t, env_info=info) for t in tasks))
    assert [t.outcome for t in trajectories] == [Outcome.SUCCESS] * len(tasks)
    assert all(t.reward == 1.0 for t in trajectories)


@pytest.mark.anyio
async def test_oracle_picks_up_a_task_chosen_by_the_server(maze_url: str) -> None:
    async with EnvClient(maze_url) as client:
        trajectory = await play_episode(client, MazeOracle(), Task(env="maze", split="train", seed=7))
    assert trajectory.task.task_id in SPLITS["train"]
    assert trajectory.outcome is Outcome.SUCCESS


async def scripted_transcript(client: EnvClient, task_id: int) -> list[tuple[str, float, bool, bool]]:
    """A fixed mix of moves, wall bumps and invalid actions, played on its own session."""
    actions = ["move up", "move right", "nonsense", "move down", "move down", "move left", "right", "move up"] * 3
    rows = []
    async with await client.create_session(task_id, seed=0) as session:
        rows.append((session.observation, 0.0, False, False))
        for action in actions:
            result = await session.step(action)
            rows.append((result.observation, result.reward, result.terminated, result.truncated))
            if result.done:
                break
    return rows


@pytest.mark.anyio
async def test_concurrent_sessions_match_one_by_one(maze_url: str) -> None:
    task_ids = [*range(0, 25, 3), *range(1_000, 1_012), *range(1_000_000, 1_000_004)]
    async with EnvClient(maze_url) as client:
        alone = [await scripted_transcript(client, t) for t in task_ids]
        together = await asyncio.gather(*(scripted_transcript(client, t) for t in task_ids))
    assert together == alone
    assert len({tuple(t) for t in alone}) == len(task_ids)  # the tasks really differ


@pytest.mark.anyio
async def test_unknown_task_is_answered_422(maze_url: str) -> None:
    import httpx

    async with httpx.AsyncClient(base_url=maze_url) as raw:
        response = await raw.post("/v1/sessions", json={"task_id": 500})
    assert response.status_code == 422
    assert "unknown maze task id 500" in response.json()["error"]["message"]
