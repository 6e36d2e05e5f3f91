"""SciWorldEnv in-process: observations, rewards, termination, invalid actions, options, determinism, the JVM."""

from __future__ import annotations

import psutil
import pytest

from agenthub import ToolCall
from agenthub_env_sciworld.env import UNKNOWN_ACTION, SciWorldEnv
from agenthub_env_sciworld.jvm import JVMError, ScienceWorldJVM
from agenthub_env_sciworld.oracle import SciWorldOracle
from agenthub_env_sciworld.tasks import NUM_TASK_IDS, TRAIN_IDS, task_id_of

FIND_LIVING_THING_0 = task_id_of("find-living-thing", 0)  # 2936
PROBE = ["open door to kitchen", "go to kitchen", "look around", "inventory", "focus on sink"]


def play(env: SciWorldEnv, task_id: int, actions: list[str], **options: object) -> list[object]:
    transcript: list[object] = [env.reset(task_id=task_id, seed=0, options=options)]
    transcript += [env.step(action) for action in actions]
    return transcript


def test_first_observation_is_the_task_and_the_room(sciworld_env: SciWorldEnv) -> None:
    observation, info = sciworld_env.reset(task_id=0, seed=0)
    description, _, room = observation.partition("\n")
    assert description.startswith("Your task is to boil ")
    assert room.startswith("This room is called the ")
    assert info == {
        "score": 0,
        "won": False,
        "task_name": "boil",
        "task_num": "1-1",
        "variation": 0,
        "split": "train",
        "simplifications": "",
    }


def test_the_gold_path_wins_with_rewards_summing_to_one(
    sciworld_env: SciWorldEnv, sciworld_oracle: SciWorldOracle
) -> None:
    sciworld_env.reset(task_id=FIND_LIVING_THING_0)
    results = []
    for action in sciworld_oracle.gold_path(FIND_LIVING_THING_0):
        results.append(sciworld_env.step(action))
        if results[-1][2]:
            break
    rewards = [r[1] for r in results]
    assert sum(rewards) == pytest.approx(1.0) and all(r >= 0 for r in rewards) and max(rewards) < 1
    assert [r[2] for r in results] == [False] * (len(results) - 1) + [True]
    last_info = results[-1][4]
    assert last_info["won"] is True and last_info["score"] == 100
    assert [r[4]["score"] for r in results] == sorted(r[4]["score"] for r in results)
    after = sciworld_env.step("look around")
    assert after[1:4] == (0.0, True, False) and "Reset to play again" in after[0]


def test_a_score_the_start_already_has_is_paid_by_the_first_step(sciworld_env: SciWorldEnv) -> None:
    _, info = sciworld_env.reset(task_id=task_id_of("find-plant", 150))
    assert info["score"] == 8
    _, reward, *_, info = sciworld_env.step("look around")
    assert reward == pytest.approx(0.08) and info["score"] == 8
    assert sciworld_env.step("look around")[1] == 0.0


def test_focusing_on_the_wrong_thing_loses(sciworld_env: SciWorldEnv) -> None:
    sciworld_env.reset(task_id=FIND_LIVING_THING_0)
    _, first_reward, *_ = sciworld_env.step("open door to kitchen")
    observation, reward, terminated, truncated, info = sciworld_env.step("focus on air")
    assert observation == "You focus on the air."
    assert (terminated, truncated) == (True, False)
    assert info["score"] == -100 and info["won"] is False
    assert first_reward + reward == pytest.approx(-1.0)


@pytest.mark.parametrize("action", ["@@ this is not a valid action @@", "", "look at", "0", "go to the moon"])
def test_unparsable_actions_are_answered_in_scienceworlds_words(sciworld_env: SciWorldEnv, action: str) -> None:
    sciworld_env.reset(task_id=FIND_LIVING_THING_0)
    observation, reward, terminated, truncated, info = sciworld_env.step(action)
    assert observation == UNKNOWN_ACTION
    assert (reward, terminated, truncated) == (0.0, False, False)
    assert info["invalid_action"] is True and info["score"] == 0


def test_an_impossible_but_parsable_action_is_answered_not_flagged(sciworld_env: SciWorldEnv) -> None:
    sciworld_env.reset(task_id=FIND_LIVING_THING_0)
    observation, *_, info = sciworld_env.step("go to kitchen")
    assert observation == "The door is not open."
    assert "invalid_action" not in info


def test_a_tool_call_is_answered_not_raised(sciworld_env: SciWorldEnv) -> None:
    sciworld_env.reset(task_id=FIND_LIVING_THING_0)
    observation, reward, terminated, _, info = sciworld_env.step(ToolCall(name="look", arguments={}))
    assert "text actions" in observation and reward == 0.0 and not terminated and info["invalid_action"]


def test_runs_of_whitespace_are_collapsed(sciworld_env: SciWorldEnv) -> None:
    sciworld_env.reset(task_id=FIND_LIVING_THING_0)
    assert sciworld_env.step("  open   door to\nkitchen ")[0] == "The door is now open."


def test_valid_actions_are_listed_only_when_a_reset_asks(sciworld_env: SciWorldEnv) -> None:
    _, info = sciworld_env.reset(task_id=FIND_LIVING_THING_0, options={"valid_actions": True})
    actions = info["available_actions"]
    assert "open door to kitchen" in actions and actions == sorted(set(actions))
    step_info = sciworld_env.step("open door to kitchen")[4]
    assert "go to kitchen" in step_info["available_actions"]
    _, info = sciworld_env.reset(task_id=FIND_LIVING_THING_0)
    assert "available_actions" not in info and "available_actions" not in sciworld_env.step("look around")[4]


def test_same_task_replays_identically_in_one_jvm_and_in_another(sciworld_env: SciWorldEnv) -> None:
    """Boil lists its paint cups in a different order on each load unless the identity hash is pinned."""
    other = SciWorldEnv(sessions_per_jvm=1)
    try:
        for task_id in (0, task_id_of("test-conductivity", 2)):
            first = play(sciworld_env, task_id, PROBE, valid_actions=True)
            assert play(sciworld_env, task_id, PROBE, valid_actions=True) == first
            assert play(other, task_id, PROBE, valid_actions=True) == first
    finally:
        other.close()


def test_the_seed_picks_a_train_task_when_no_id_is_given(sciworld_env: SciWorldEnv) -> None:
    chosen = {seed: sciworld_env.reset(seed=seed)[1] for seed in (1, 2, 1)}
    assert len(chosen) == 2 and all(info["split"] == "train" for info in chosen.values())
    assert sciworld_env.reset(seed=1)[1] == chosen[1]
    assert sciworld_env.reset()[1] == sciworld_env.reset(seed=0)[1]
    assert {TRAIN_IDS[0], TRAIN_IDS[-1]} <= set(TRAIN_IDS)


def test_the_step_limit_truncates(sciworld_env: SciWorldEnv) -> None:
    sciworld_env.reset(task_id=FIND_LIVING_THING_0)
    sciworld_env.step_limit = 15
    try:
        first = sciworld_env.step("wait")
        second = sciworld_env.step("wait")
    finally:
        sciworld_env.step_limit = 100
    assert first[2:4] == (False, False) and first[4]["moves"] <= 15
    assert second[2:4] == (False, True) and second[4]["moves"] > 15
    assert sciworld_env.step("look around")[2:4] == (False, True)


@pytest.mark.parametrize("task_id", [-1, NUM_TASK_IDS, "3", 2.0, True])
def test_unknown_task_ids_raise_value_error(sciworld_env: SciWorldEnv, task_id: object) -> None:
    with pytest.raises(ValueError, match="task ids are integers from 0 to 7206"):
        sciworld_env.reset(task_id=task_id)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "options, message",
    [
        ({"difficulty": "hard"}, "unknown sciworld reset option"),
        ({"valid_actions": "yes"}, "must be true or false"),
        ({"simplifications": "fast"}, "unknown simplification"),
        ({"simplifications": 1}, "comma-separated string"),
    ],
)
def test_bad_options_raise_value_error(sciworld_env: SciWorldEnv, options: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        sciworld_env.reset(task_id=0, options=options)


def test_electrical_tasks_refuse_no_electrical_action(sciworld_env: SciWorldEnv) -> None:
    with pytest.raises(ValueError, match="needs electrical actions"):
        sciworld_env.reset(task_id=task_id_of("power-component", 0), options={"simplifications": "noElectricalAction"})


def test_simplifications_change_the_world(sciworld_env: SciWorldEnv) -> None:
    _, info = sciworld_env.reset(task_id=FIND_LIVING_THING_0, options={"simplifications": "openDoors"})
    assert info["simplifications"] == "openDoors"
    assert sciworld_env.step("go to kitchen")[0].startswith("You move to the kitchen.")


def test_one_instance_owns_one_capped_jvm_it_frees_on_close(capfd: pytest.CaptureFixture[str]) -> None:
    """Also: nothing reaches this process's stdout or stderr, not even from the JVM."""
    env = SciWorldEnv(heap_mb=128, sessions_per_jvm=1)
    jvm = psutil.Process(env.jvm.pid)
    assert jvm.ppid() == psutil.Process().pid
    assert {"-Xmx128m", "-XX:hashCode=2", "-XX:+UseSerialGC"} <= set(jvm.cmdline())
    with pytest.raises(RuntimeError, match="before reset"):
        env.step("look around")
    env.reset(task_id=FIND_LIVING_THING_0, options={"valid_actions": True})
    env.step("@@ not an action @@")
    env.step("open door to kitchen")
    env.close()
    assert not psutil.pid_exists(jvm.pid) or jvm.status() == psutil.STATUS_ZOMBIE
    env.close()
    with pytest.raises(RuntimeError, match="closed"):
        env.reset(task_id=0)
    assert capfd.readouterr() == ("", "")


def test_a_dead_jvm_fails_the_step_with_advice() -> None:
    env = SciWorldEnv(sessions_per_jvm=1)
    try:
        env.reset(task_id=FIND_LIVING_THING_0)
        env.jvm.process.kill()
        env.jvm.process.wait()
        with pytest.raises(JVMError, match="create a new session"):
            env.step("look around")
    finally:
        env.close()


def test_configuration_errors_say_what_to_do() -> None:
    with pytest.raises(JVMError, match="needs Java 17"):
        ScienceWorldJVM(java="/no/such/java")
    with pytest.raises(ValueError, match="heap_mb must be an integer of at least 64"):
        ScienceWorldJVM(heap_mb=16)
    with pytest.raises(ValueError, match="step_limit must be a positive integer or None"):
        SciWorldEnv(step_limit=0)
