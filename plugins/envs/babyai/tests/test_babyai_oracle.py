"""The oracle solves sampled tasks of every split, in-process and through a real server."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from agenthub import AgenthubError, EnvClient, Observation, Outcome, Task, ThreadedServer, get_plugin_host, play_episode

from agenthub_env_babyai.env import BabyAIEnv
from agenthub_env_babyai.levels import LEVELS, SPLITS, UNSOLVABLE_BY_ORACLE, level_of
from agenthub_env_babyai.oracle import BabyAIOracle

GENEROUS_TURNS = 80
# Quick levels (the bot needs few primitive moves), so that the suite stays fast.
QUICK_LEVELS = [0, 1, 2, 3, 4, 7, 8, 9, 10, 12, 13, 14, 18, 19, 20, 21, 24, 27, 28, 29, 30, 32, 34, 37]


def sample(split: str, n: int) -> list[int]:
    """``n`` tasks of ``split`` on quick levels, spread over seeds."""
    first = SPLITS[split].first(1)[0]
    assert isinstance(first, int)
    base = first - first % len(LEVELS) + len(LEVELS) * 3  # a few seeds into the split
    return [base + len(LEVELS) * (i // len(QUICK_LEVELS)) + QUICK_LEVELS[i % len(QUICK_LEVELS)] for i in range(n)]


async def play_in_process(task_id: int, max_turns: int = GENEROUS_TURNS) -> tuple[bool, int]:
    env = BabyAIEnv()
    text, info = env.reset(task_id=task_id)
    episode = BabyAIOracle().start_episode(Task(env="babyai", task_id=task_id), get_plugin_host().env("babyai").info())
    observation = Observation(text=text, info=info)
    for turn in range(1, max_turns + 1):
        action = (await episode.act(observation)).action
        text, _, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            return bool(info.get("won")), turn
        observation = Observation(text=text, info=info)
    return False, max_turns


def test_oracle_is_registered_and_named_by_the_env() -> None:
    host = get_plugin_host()
    spec = host.env("babyai")
    assert spec.oracle == "babyai-oracle" and spec.default_max_turns == 20
    assert isinstance(host.agent("babyai-oracle").make(), BabyAIOracle)


@pytest.mark.parametrize("split", ["train", "test"])
def test_oracle_wins_sampled_tasks_in_process(split: str) -> None:
    tasks = sample(split, 24)
    results = [asyncio.run(play_in_process(t)) for t in tasks]
    lost = [t for t, (won, _) in zip(tasks, results, strict=True) if not won]
    assert not lost, f"the oracle lost tasks {lost} ({[level_of(t).name for t in lost]})"


def test_oracle_cannot_open_the_box_of_keyinbox() -> None:
    """A known limit of AgentGym's action set, reported as an agent error, not a wrong move."""
    task_id = LEVELS.index("BabyAI-KeyInBox-v0")
    assert LEVELS[task_id] in UNSOLVABLE_BY_ORACLE
    with pytest.raises(AgenthubError, match="bot gave up"):
        asyncio.run(play_in_process(task_id))


def test_a_task_the_bot_fails_is_blamed_on_the_bot_not_the_action_set() -> None:
    """On task 415 (an OpenDoorsOrder Debug level) minigrid's own bot toggles a door that ends the mission
    unsolved: the oracle refuses to send a losing move and says whose limit it is."""
    assert level_of(415).name == "BabyAI-OpenDoorsOrderN4Debug-v0"
    with pytest.raises(AgenthubError, match=r"bot cannot solve task 415: its own plan .* ends the mission unsolved"):
        asyncio.run(play_in_process(415))


@pytest.mark.anyio
async def test_oracle_wins_through_a_real_server_with_concurrent_sessions() -> None:
    spec = get_plugin_host().env("babyai")
    tasks = sample("test", 12) + sample("train", 12)
    server = ThreadedServer(spec).start()
    try:
        async with EnvClient(server.url) as client:
            info = await client.info()
            oracle = BabyAIOracle()
            together = await asyncio.gather(*(play_episode(client, oracle, _task(t), env_info=info) for t in tasks))
            one_by_one = [await play_episode(client, oracle, _task(t), env_info=info) for t in tasks[:6]]
    finally:
        server.stop()
    outcomes = {t: traj.outcome for t, traj in zip(tasks, together, strict=True)}
    assert all(o == Outcome.SUCCESS for o in outcomes.values()), outcomes
    for alone, parallel in zip(one_by_one, together, strict=False):
        assert _transcript(alone) == _transcript(parallel)


def _task(task_id: int) -> Task:
    return Task(env="babyai", task_id=task_id, max_turns=GENEROUS_TURNS)


def _transcript(trajectory: Any) -> list[Any]:
    return [trajectory.first_observation] + [(t.action, t.observation, t.reward) for t in trajectory.turns]
