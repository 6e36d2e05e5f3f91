"""TextWorldEnv in-process: observations, reward and success, invalid actions, options, determinism."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from agenthub import ToolCall
from agenthub_env_textworld.env import MAX_COMMAND_BYTES, TextWorldEnv, clean_feedback
from agenthub_env_textworld.games import GameCache
from agenthub_env_textworld.tasks import TRAIN, TRAIN_STOP, draw_task, game_spec, task_id

COOKING = task_id("train", "cooking", 1, 0)
"""Cooking level 1, game 0: take the orange bell pepper from the fridge, prepare the meal, eat it."""
TREASURE = task_id("train", "treasure_hunter", 2, 3)
COINS = task_id("test", "coin_collector", 1, 0)


@pytest.fixture
def env(cache: GameCache) -> Iterator[TextWorldEnv]:
    instance = TextWorldEnv(cache_dir=cache.root)
    yield instance
    instance.close()


def play(env: TextWorldEnv, task: int, actions: list[str], **reset: object) -> list[object]:
    transcript: list[object] = [env.reset(task_id=task, **reset)]  # type: ignore[arg-type]
    transcript += [env.step(action) for action in actions]
    return transcript


def test_first_observation_is_the_games_text_without_logo_prompt_or_status(env: TextWorldEnv) -> None:
    observation, info = env.reset(task_id=COOKING)
    assert observation.startswith("You are hungry! Let's cook a delicious meal.")
    assert "\n-= Kitchen =-\n" in observation
    assert "$$" not in observation and not observation.rstrip().endswith(">") and "\n\n\n" not in observation
    assert info == {
        "score": 0,
        "max_score": 3,
        "won": False,
        "lost": False,
        "moves": 0,
        "family": "cooking",
        "level": 1,
        "objective": observation.split("\n\n")[0],
    }


def test_cleaning_keeps_the_answer_and_drops_the_interpreters_chrome() -> None:
    raw = (
        "\nYou eat the meal. Not bad.\n\n\nYour score has just gone up by one point.\n\n\n"
        "                         *** The End ***\n\nYou scored 3 out of a possible 3, in 6 turns.\n\n\n"
        "Would you like to RESTART, RESTORE a saved game, QUIT or UNDO the last command?\n"
        ">                                                      -= Kitchen =-2/5"
    )
    assert clean_feedback(raw) == (
        "You eat the meal. Not bad.\n\nYour score has just gone up by one point.\n\n"
        "*** The End ***\n\nYou scored 3 out of a possible 3, in 6 turns."
    )
    assert clean_feedback("\n\n>        -= Kitchen =-0/1") == "(The game printed nothing.)"


def test_the_walkthrough_wins_with_rewards_adding_up_to_one(env: TextWorldEnv) -> None:
    _, info = env.reset(task_id=COOKING, options={"walkthrough": True})
    walkthrough = info["walkthrough"]
    results = [env.step(command) for command in walkthrough]
    rewards = [r[1] for r in results]
    assert sum(rewards) == pytest.approx(1.0)
    assert rewards.count(0.0) == len(rewards) - info["max_score"]  # one point per scoring step here
    assert [r[2] for r in results] == [False] * (len(results) - 1) + [True]
    last = results[-1][4]
    assert last["won"] is True and last["lost"] is False and last["score"] == last["max_score"] == 3
    assert "*** The End ***" in results[-1][0] and "RESTART" not in results[-1][0]
    after = env.step("look")
    assert after[:4] == ("The game is over: you won. Reset to play again.", 0.0, True, False)


def test_losing_terminates_without_success(env: TextWorldEnv) -> None:
    env.reset(task_id=COOKING)
    took = env.step("take orange bell pepper from fridge")
    observation, reward, terminated, truncated, info = env.step("eat orange bell pepper")
    assert took[1] == pytest.approx(1 / 3)
    assert "*** You lost! ***" in observation
    assert (reward, terminated, truncated) == (0.0, True, False)
    assert info["lost"] is True and info["won"] is False and "invalid_action" not in info
    assert env.step("look")[0] == "The game is over: you lost. Reset to play again."


@pytest.mark.parametrize(
    "action, answer",
    [
        ("@@ this is not a valid action @@", "That's not a verb I recognise."),
        ("xyzzy", "That's not a verb I recognise."),
        ("take the moon", "You can't see any such thing."),
        ("", "I beg your pardon?"),
        ("save", "'save' is not available in this game"),
        ("QUIT", "'quit' is not available in this game"),
        ("look. restart", "'restart' is not available in this game"),
        ("tw-extra-infos inventory", "'tw-extra-infos' is not available in this game"),
        ("x" * (MAX_COMMAND_BYTES + 1), f"the game reads at most {MAX_COMMAND_BYTES}"),
    ],
)
def test_invalid_actions_are_answered_in_words_and_change_nothing(env: TextWorldEnv, action: str, answer: str) -> None:
    env.reset(task_id=COOKING)
    observation, reward, terminated, truncated, info = env.step(action)
    assert answer in observation
    assert (reward, terminated, truncated) == (0.0, False, False)
    assert info["invalid_action"] is True and info["moves"] == 0 and info["score"] == 0
    # The game goes on exactly as if the action had never been sent.
    assert env.step("take orange bell pepper from fridge")[1] == pytest.approx(1 / 3)


def test_a_failed_but_understood_action_is_not_flagged(env: TextWorldEnv) -> None:
    env.reset(task_id=COOKING)
    observation, _, _, _, info = env.step("go south")
    assert observation == "You can't go that way."
    assert "invalid_action" not in info and info["moves"] == 1


def test_a_tool_call_is_answered_not_raised(env: TextWorldEnv) -> None:
    env.reset(task_id=COOKING)
    observation, reward, terminated, _, info = env.step(ToolCall(name="look"))
    assert "text commands" in observation and reward == 0.0 and not terminated and info["invalid_action"]


def test_a_newline_cannot_smuggle_in_a_second_command(env: TextWorldEnv) -> None:
    env.reset(task_id=COOKING)
    split = env.step("take orange bell pepper\nfrom fridge")
    env.reset(task_id=COOKING)
    joined = env.step("take orange bell pepper from fridge")
    assert split == joined


def test_admissible_commands_only_when_asked(env: TextWorldEnv) -> None:
    _, plain = env.reset(task_id=COOKING)
    assert "available_actions" not in plain and "available_actions" not in env.step("look")[4]
    _, asked = env.reset(task_id=COOKING, options={"admissible_commands": True, "walkthrough": True})
    actions = asked["available_actions"]
    assert actions == sorted(actions) and {"look", "inventory", asked["walkthrough"][1]} <= set(actions)
    after = env.step("take orange bell pepper from fridge")[4]["available_actions"]
    assert "eat orange bell pepper" in after and "eat orange bell pepper" not in actions
    _, again = env.reset(task_id=COOKING)
    assert "available_actions" not in again


@pytest.mark.parametrize(
    "options, message",
    [
        ({"admissible": True}, "unknown textworld reset option"),
        ({"admissible_commands": "yes"}, "must be true or false"),
    ],
)
def test_unknown_or_malformed_options_raise_value_error(
    env: TextWorldEnv, options: dict[str, object], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        env.reset(task_id=COOKING, options=options)


@pytest.mark.parametrize("task", [-1, TRAIN_STOP, "0", 1.5])
def test_unknown_task_ids_raise_value_error(env: TextWorldEnv, task: object) -> None:
    with pytest.raises(ValueError, match="unknown textworld task"):
        env.reset(task_id=task)  # type: ignore[arg-type]


def test_seeded_resets_are_identical_across_instances_and_resets(cache: GameCache) -> None:
    probe = ["look", "inventory", "go east", "xyzzy", "take coin", "go west"]
    first, second = TextWorldEnv(cache_dir=cache.root), TextWorldEnv(cache_dir=cache.root)
    for task in (COOKING, TREASURE, COINS):
        reference = play(first, task, probe, seed=123)
        assert play(second, task, probe, seed=123) == reference
        assert play(first, task, probe, seed=123) == reference  # the same instance, reset again
        assert play(first, task, probe, seed=456) == reference  # the task fixes the game; the seed changes nothing
    first.close()
    second.close()


def test_no_task_id_draws_a_train_task_from_the_seed(env: TextWorldEnv) -> None:
    drawn = draw_task(11)
    assert drawn in TRAIN and draw_task(11) == drawn and len({draw_task(s) for s in range(20)}) == 20
    assert draw_task(None) == draw_task(0)
    observation, info = env.reset(seed=11)
    assert (info["family"], info["level"]) == (game_spec(drawn).family, game_spec(drawn).level)
    assert env.reset(task_id=drawn, seed=11)[0] == observation


def test_step_before_reset_is_a_programming_error(cache: GameCache) -> None:
    with pytest.raises(RuntimeError, match="reset"):
        TextWorldEnv(cache_dir=cache.root).step("look")


def test_close_twice_is_harmless_and_reset_reopens(env: TextWorldEnv) -> None:
    env.reset(task_id=COOKING)
    env.close()
    env.close()
    assert env.reset(task_id=COOKING)[1]["max_score"] == 3


def test_instances_in_threads_play_as_they_do_alone(cache: GameCache) -> None:
    """The service steps different instances from different threads; each has its own interpreter."""
    tasks = [COOKING, TREASURE, COINS] * 2
    walkthroughs = {task: cache.walkthrough(game_spec(task)) for task in set(tasks)}

    def run(task: int) -> list[object]:
        env = TextWorldEnv(cache_dir=cache.root)
        try:
            return play(env, task, [*walkthroughs[task], "look"], options={"admissible_commands": True})
        finally:
            env.close()

    alone = [run(task) for task in tasks]
    with ThreadPoolExecutor(max_workers=6) as pool:
        together = list(pool.map(run, tasks))
    assert together == alone


_OTHER_PROCESS = """
import sys
from agenthub_env_textworld.env import TextWorldEnv
env = TextWorldEnv(cache_dir=sys.argv[1])
first = env.reset(task_id=int(sys.argv[2]), seed=5)
steps = [env.step(a) for a in ("look", "inventory", "go east")]
print(repr((first, steps)))
"""


def test_another_process_with_its_own_cache_plays_the_same_game_and_prints_only_its_result(
    env: TextWorldEnv, cache: GameCache, tmp_path: Path
) -> None:
    """A fresh cache and another hash seed: the game is generated again there, by another worker process,
    and must come out the same, byte for byte (TextWorld's generators alone depend on the hash seed)."""
    result = subprocess.run(
        [sys.executable, "-c", _OTHER_PROCESS, str(tmp_path), str(TREASURE)],
        env={**os.environ, "PYTHONHASHSEED": "7"},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    first = env.reset(task_id=TREASURE, seed=5)
    steps = [env.step(a) for a in ("look", "inventory", "go east")]
    assert result.stdout == repr((first, steps)) + "\n"
    theirs, ours = GameCache(tmp_path).game_file(game_spec(TREASURE)), cache.game_file(game_spec(TREASURE))
    for name in ("game.z8", "game.json"):
        assert (theirs.parent / name).read_bytes() == (ours.parent / name).read_bytes(), name
