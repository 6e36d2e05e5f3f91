"""The oracle: deterministic gold paths, and wins through a real server on a sample of each split."""

from __future__ import annotations

import pytest

from agenthub import AgenthubError, EnvClient, EnvInfo, Outcome, Task, play_episode
from agenthub_env_sciworld.env import SciWorldEnv
from agenthub_env_sciworld.oracle import SciWorldOracle
from agenthub_env_sciworld.tasks import task_id_of, task_of

MAX_TURNS = 30
WON_IN_30_TURNS = {
    "train": [
        task_id_of("find-living-thing", 0),
        task_id_of("power-component", 0),
        task_id_of("lifespan-longest-lived", 0),
    ],
    "dev": [task_id_of("find-plant", 150), task_id_of("power-component-renewable-vs-nonrenewable-energy", 10)],
    "test": [task_id_of("use-thermometer", 405), task_id_of("identify-life-stages-2", 6)],
}
"""A few cheap tasks per split whose gold path fits 30 turns (the README has the rates over larger samples)."""

INFO = EnvInfo(name="sciworld", version="test", default_max_turns=MAX_TURNS, splits=["train", "dev", "test"])


@pytest.mark.anyio
@pytest.mark.parametrize("split", ["train", "dev", "test"])
async def test_oracle_wins_through_a_real_server(
    sciworld_url: str, sciworld_oracle: SciWorldOracle, split: str
) -> None:
    async with EnvClient(sciworld_url, timeout=120) as client:
        info = await client.info()
        for task_id in WON_IN_30_TURNS[split]:
            assert task_of(task_id)[0].split_of(task_of(task_id)[1]) == split
            task = Task(env="sciworld", task_id=task_id, split=split, seed=5)
            trajectory = await play_episode(client, sciworld_oracle, task, env_info=info)
            assert trajectory.outcome == Outcome.SUCCESS, (task_id, trajectory.error)
            assert trajectory.reward == pytest.approx(1.0) and len(trajectory.turns) <= MAX_TURNS
            assert trajectory.turns[-1].info["score"] == 100


def test_gold_paths_do_not_depend_on_the_oracles_history(sciworld_oracle: SciWorldOracle) -> None:
    """scienceworld's gold path for freeze variation 19 has 105 actions in a fresh JVM, and 99 or 81 in one that
    computed other gold paths before (see the README); the oracle's is the fresh one, whatever it did before.

    That path never completes the task (scienceworld's own defect), so the oracle plays it whole and loses.
    """
    for task_id in WON_IN_30_TURNS["train"]:
        sciworld_oracle.gold_path(task_id)
    path = sciworld_oracle.gold_path(task_id_of("freeze", 19))
    assert len(path) == 105 and path[-2:] == ("wait", "wait1")


def test_the_oracle_drops_the_gold_actions_scienceworld_refuses(
    sciworld_env: SciWorldEnv, sciworld_oracle: SciWorldOracle
) -> None:
    """scienceworld's gold path for this test-conductivity variation connects wires to a terminal-less block."""
    task_id = task_id_of("test-conductivity", 843)
    path = sciworld_oracle.gold_path(task_id)
    assert not any(action.startswith("connect block terminal") for action in path)
    sciworld_env.reset(task_id=task_id)
    results = [sciworld_env.step(action) for action in path]
    assert not any(result[4].get("invalid_action") for result in results)
    assert [result[2] for result in results] == [False] * (len(path) - 1) + [True]
    assert results[-1][4]["won"] is True


@pytest.mark.parametrize(
    "task, env, message",
    [
        (Task(env="sciworld", task_id=0), INFO.model_copy(update={"name": "textcraft"}), "only plays env 'sciworld'"),
        (Task(env="sciworld"), INFO, "needs the episode's task id"),
        (Task(env="sciworld", task_id="0"), INFO, "needs the episode's task id"),
        (Task(env="sciworld", task_id=0, options={"simplifications": "fast"}), INFO, "unknown simplification"),
    ],
)
def test_episodes_the_oracle_cannot_play_are_refused_in_words(task: Task, env: EnvInfo, message: str) -> None:
    with pytest.raises(AgenthubError, match=message):
        SciWorldOracle().start_episode(task, env)
