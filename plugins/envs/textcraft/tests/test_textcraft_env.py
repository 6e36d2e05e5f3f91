"""TextCraftEnv in-process: determinism, pure resets, invalid actions, rewards."""

from __future__ import annotations

import gc
import os
import random
import subprocess
import sys
import tracemalloc
from concurrent.futures import ThreadPoolExecutor

import pytest

from agenthub import ToolCall
from agenthub_env_textcraft.env import TextCraftEnv
from agenthub_env_textcraft.oracle import plan_actions
from agenthub_env_textcraft.recipes import recipe_book
from agenthub_env_textcraft.splits import NUM_TASKS, TRAIN_IDS


def play(env: TextCraftEnv, task_id: int, seed: int, actions: list[str]) -> list[object]:
    transcript: list[object] = [env.reset(task_id=task_id, seed=seed)]
    transcript += [env.step(action) for action in actions]
    return transcript


def test_first_observation_lists_commands_and_goal(env: TextCraftEnv) -> None:
    observation, info = env.reset(task_id=0, seed=0)
    head, _, goal = observation.partition("\n\nGoal: craft ")
    assert head.startswith("Crafting commands:\ncraft ")
    assert goal == f"{info['goal']}."
    assert info["depth"] == 1
    assert info["won"] is False
    assert "inventory" in info["available_actions"]


def test_same_task_and_seed_give_identical_episodes() -> None:
    probe = ["inventory", "get 1 stone", "craft 1 stone button using 1 stone", "inventory"]
    first, second = TextCraftEnv(), TextCraftEnv()
    for task_id in (3, 250, 543):
        assert play(first, task_id, 123, probe) == play(second, task_id, 123, probe)


def test_the_seed_changes_the_listing_not_the_goal(env: TextCraftEnv) -> None:
    starts = {seed: env.reset(task_id=400, seed=seed) for seed in (123, 456)}
    assert starts[123][1]["goal"] == starts[456][1]["goal"]
    assert starts[123][0] != starts[456][0]


def test_no_seed_means_agentgyms_default(env: TextCraftEnv) -> None:
    assert env.reset(task_id=10) == env.reset(task_id=10, seed=42)


def test_task_chosen_by_seed_comes_from_train(env: TextCraftEnv) -> None:
    goals = {env.reset(seed=seed)[1]["goal"] for seed in range(20)}
    train_goals = {recipe_book().goals[i].removeprefix("minecraft:").replace("_", " ") for i in TRAIN_IDS}
    assert goals <= train_goals and len(goals) > 1


def test_observations_do_not_depend_on_the_process() -> None:
    """Hash seeds differ between processes; the listing must not follow set order."""
    code = (
        "from agenthub_env_textcraft.env import TextCraftEnv\nprint(repr(TextCraftEnv().reset(task_id=321, seed=9)[0]))"
    )
    outputs = set()
    for hash_seed in ("1", "2", "3"):
        result = subprocess.run(
            [sys.executable, "-c", code],
            env={**os.environ, "PYTHONHASHSEED": hash_seed},
            capture_output=True,
            text=True,
            check=True,
        )
        outputs.add(result.stdout)
    assert outputs == {repr(TextCraftEnv().reset(task_id=321, seed=9)[0]) + "\n"}


def test_200_resets_of_one_instance_are_identical_and_hold_no_memory(env: TextCraftEnv) -> None:
    first = env.reset(task_id=420, seed=3)
    for _ in range(20):  # warm caches (closures, regexes) before measuring
        env.reset(task_id=420, seed=3)
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(200):
            assert env.reset(task_id=420, seed=3) == first
            env.step("get 9 iron nugget")
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert grown < 64 * 1024, f"200 resets kept {grown} bytes"


def test_resets_never_touch_the_global_random(env: TextCraftEnv) -> None:
    random.seed(1234)
    state = random.getstate()
    for task_id in (0, 100, 500):
        env.reset(task_id=task_id, seed=7)
        env.step("inventory")
    env.reset(seed=8)
    assert random.getstate() == state


@pytest.mark.parametrize("task_id", [-1, NUM_TASKS, "3", "textcraft_3", 2.0, True])
def test_unknown_task_ids_raise_value_error(env: TextCraftEnv, task_id: object) -> None:
    with pytest.raises(ValueError, match="task ids are integers from 0 to 543"):
        env.reset(task_id=task_id, seed=0)  # type: ignore[arg-type]


def test_unknown_options_raise_value_error(env: TextCraftEnv) -> None:
    with pytest.raises(ValueError, match="no reset options"):
        env.reset(task_id=0, options={"difficulty": "hard"})


@pytest.mark.parametrize(
    "action, answer",
    [
        ("@@ this is not a valid action @@", "Could not execute @@ this is not a valid action @@"),
        ("", "Could not execute "),
        ("get 1 stick", "Could not find stick"),
        ("get 1 unobtainium", "Could not find unobtainium"),
        ("craft 1 stick using 2 oak planks", "Could not find enough items to craft minecraft:stick"),
        ("craft 1 stick using two planks", "Wrong item format: two planks"),
    ],
)
def test_invalid_actions_are_answered_in_the_games_words(env: TextCraftEnv, action: str, answer: str) -> None:
    env.reset(task_id=0, seed=0)
    observation, reward, terminated, truncated, info = env.step(action)
    assert observation == answer
    assert (reward, terminated, truncated) == (0.0, False, False)
    assert info["invalid_action"] is True


def test_a_tool_call_is_answered_not_raised(env: TextCraftEnv) -> None:
    env.reset(task_id=0, seed=0)
    observation, reward, terminated, _, info = env.step(ToolCall(name="craft", arguments={"item": "stick"}))
    assert "text actions" in observation and reward == 0.0 and not terminated and info["invalid_action"]


def test_extra_whitespace_is_forgiven(env: TextCraftEnv) -> None:
    env.reset(task_id=0, seed=0)
    assert env.step("  get   2 oak logs \n")[0] == "Got 2 oak logs"
    assert env.step("inventory")[0] == "Inventory: [oak logs] (2) "


def test_reward_one_and_termination_exactly_when_the_goal_is_crafted(env: TextCraftEnv) -> None:
    observation, _ = env.reset(task_id=200, seed=1)
    plan = plan_actions(observation)
    results = [env.step(action) for action in plan]
    assert [r[1] for r in results] == [0.0] * (len(plan) - 1) + [1.0]
    assert [r[2] for r in results] == [False] * (len(plan) - 1) + [True]
    assert results[-1][4]["won"] is True and results[-1][4]["score"] == 1.0
    after = env.step("inventory")
    assert after[1:4] == (0.0, True, False) and "Reset to play again" in after[0]


def test_available_actions_include_every_oracle_action(env: TextCraftEnv) -> None:
    for task_id in range(0, NUM_TASKS, 7):
        observation, info = env.reset(task_id=task_id, seed=task_id)
        listed = set(info["available_actions"])
        for action in plan_actions(observation):
            if action.startswith("craft "):
                assert action in listed, (task_id, action)
            else:  # a get of the total needed; the list has the per-recipe amounts of the same item
                item = action.split(" ", 2)[2]
                assert any(a.startswith("get ") and a.split(" ", 2)[2] == item for a in listed), (task_id, action)


def test_list_actions_false_leaves_them_out() -> None:
    observation, info = TextCraftEnv(list_actions=False).reset(task_id=0, seed=0)
    assert "available_actions" not in info and observation.startswith("Crafting commands:")


def test_step_before_reset_is_a_programming_error() -> None:
    with pytest.raises(RuntimeError, match="reset"):
        TextCraftEnv().step("inventory")


def test_close_twice_is_harmless(env: TextCraftEnv) -> None:
    env.reset(task_id=0, seed=0)
    env.close()
    env.close()


def test_instances_in_threads_play_as_they_do_alone() -> None:
    """The service runs instances in different threads; they share only the read-only recipe book."""
    tasks = [(task_id, seed) for task_id in range(0, NUM_TASKS, 31) for seed in (0, 1)]

    def run(task: tuple[int, int]) -> list[object]:
        env = TextCraftEnv()
        observation, _ = env.reset(task_id=task[0], seed=task[1])
        return play(env, task[0], task[1], [*plan_actions(observation), "inventory"])

    alone = [run(task) for task in tasks]
    with ThreadPoolExecutor(max_workers=8) as pool:
        together = list(pool.map(run, tasks))
    assert together == alone
