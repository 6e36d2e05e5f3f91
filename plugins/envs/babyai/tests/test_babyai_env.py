"""The environment in-process: task ids, determinism, invalid actions, threads, stdout."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from agenthub_env_babyai.env import BabyAIEnv
from agenthub_env_babyai.levels import LEVELS, SPLITS, level_of


def transcript(task_id: Any, actions_per_episode: int = 6) -> list[Any]:
    """Reset and take a fixed, state-dependent sequence of listed actions."""
    env = BabyAIEnv()
    text, info = env.reset(task_id=task_id)
    rows: list[Any] = [text]
    for turn in range(actions_per_episode):
        actions = info["available_actions"]
        action = actions[(turn * 5 + 1) % len(actions)]
        text, reward, terminated, truncated, info = env.step(action)
        rows.append((action, text, reward, terminated, truncated))
        if terminated or truncated:
            break
    env.close()
    return rows


def test_task_ids_map_as_in_agentgym() -> None:
    assert level_of(0).name == LEVELS[0] and level_of(0).seed == 0
    assert level_of(41).name == "BabyAI-GoToRedBall-v0" and level_of(41).seed == 1
    assert level_of(39).name == "BabyAI-BossLevelNoUnlock-v0"
    assert level_of("babyai_81") == level_of(81)
    assert SPLITS["test"].count == 400 and 0 in SPLITS["test"]
    assert 400 in SPLITS["train"] and 399 not in SPLITS["train"]


def test_first_observation_names_goal_and_actions() -> None:
    env = BabyAIEnv()
    text, info = env.reset(task_id=1)
    assert text.startswith("Your goal: go to the red ball\n")
    assert info["available_actions"][:2] == ["turn left", "turn right"]
    assert text.endswith("]") and '\nAvailable actions: ["turn left", "turn right"' in text
    assert info["level"] == "BabyAI-GoToRedBall-v0"


@pytest.mark.parametrize("task_id", [-1, "babyai_x", "seven", True])
def test_unknown_task_ids_raise_value_error(task_id: Any) -> None:
    with pytest.raises(ValueError, match="non-negative integers"):
        BabyAIEnv().reset(task_id=task_id)


def test_reset_options_are_refused() -> None:
    with pytest.raises(ValueError, match="no reset options"):
        BabyAIEnv().reset(task_id=0, options={"level": 3})


def test_same_task_same_game_and_different_tasks_differ() -> None:
    assert transcript(45) == transcript(45)
    assert transcript(45)[0] != transcript(85)[0]  # same level, next seed


def test_reset_of_a_used_instance_replays_exactly() -> None:
    env = BabyAIEnv()
    first, _ = env.reset(task_id=7)
    env.step("turn left")
    env.reset(task_id=47)  # same level, another seed
    again, _ = env.reset(task_id=7)
    assert again == first


def test_invalid_actions_are_answered_in_the_envs_words() -> None:
    env = BabyAIEnv()
    env.reset(task_id=1)
    text, reward, terminated, truncated, info = env.step("fly to the moon")
    assert text.startswith("The action is not recognized. Please check valid actions.\nAvailable actions: [")
    assert (reward, terminated, truncated, info["action_is_valid"]) == (0.0, False, False, False)
    text, *_ = env.step("drop")
    assert text.startswith("You cannot drop the object, as you are not carrying anything.")
    text, *_ = env.step("check available actions")
    assert text.startswith("You can take the following actions: turn left, turn right")


def test_winning_move_rewards_and_ends_the_episode() -> None:
    env = BabyAIEnv()
    env.reset(task_id=1)  # go to the red ball; it is in view
    text, reward, terminated, truncated, info = env.step("Go to red ball 1")
    assert terminated and not truncated
    assert info["won"] is True and 0.5 < reward == info["score"] < 1.0
    assert "\n The task is completed." in text
    text, reward, terminated, _, _ = env.step("turn left")
    assert terminated and reward == 0.0 and "episode is over" in text


def test_pick_up_with_a_space_is_accepted() -> None:
    env = BabyAIEnv()
    _, info = env.reset(task_id=18)  # PickupLoc
    pickup = next(a for a in info["available_actions"] if a.startswith("pickup "))
    _, _, _, _, info = env.step("pick up " + pickup.removeprefix("pickup "))
    assert info["action_is_valid"] is True


def test_threads_do_not_influence_each_other() -> None:
    task_ids = [5, 6, 23, 31, 38, 39, 45, 46]
    alone = {t: transcript(t) for t in task_ids}
    together: dict[int, Any] = {}

    def run(task_id: int) -> None:
        together[task_id] = transcript(task_id)

    threads = [threading.Thread(target=run, args=(t,)) for t in task_ids * 2]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert together == alone


def test_level_generation_prints_nothing(capfd: pytest.CaptureFixture[str]) -> None:
    env = BabyAIEnv()
    for task_id in range(0, 400, 7):  # Unlock (24), SynthLoc (36) and others reject samples
        env.reset(task_id=task_id)
    out, _ = capfd.readouterr()
    assert out == ""
