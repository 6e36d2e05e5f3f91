"""The wordle environment in-process: feedback, rewards, the guess limit and determinism."""

from __future__ import annotations

import pytest

from agenthub_env_wordle.env import WordleEnv, parse_guess
from agenthub_env_wordle.rules import feedback
from agenthub_env_wordle.tasks import TEST, TRAIN
from agenthub_env_wordle.words import answers


def a_wrong_word(answer: str) -> str:
    return "crane" if answer != "crane" else "slate"


@pytest.mark.parametrize(
    ("action", "word"),
    [
        ("s h i r e", "shire"),
        ("SHIRE.", "shire"),
        ("Thought:\nI know the first letter is f.\n\nAction:\nf r o w n", "frown"),
        ("  crane ", "crane"),
        ("two words", "two words"),
    ],
)
def test_parse_guess(action: str, word: str) -> None:
    assert parse_guess(action) == word


def test_first_observation_explains_the_feedback() -> None:
    text, info = WordleEnv().reset(task_id=0)
    assert '"g" means' in text and '"y" means' in text and '"b" means' in text
    assert "6 guesses" in text and text.endswith("Let's start Wordle!")
    assert info == {"guesses": 0, "guesses_left": 6}


def test_a_guess_is_answered_with_spaced_feedback_letters() -> None:
    env = WordleEnv()
    env.reset(task_id=5)
    guess = a_wrong_word(answers()[5])
    text, reward, terminated, truncated, info = env.step(" ".join(guess))
    assert text == " ".join(feedback(guess, answers()[5]))
    assert (reward, terminated, truncated) == (0.0, False, False)
    assert info["guesses_left"] == 5


def test_finding_the_word_wins_reward_one() -> None:
    env = WordleEnv()
    env.reset(task_id=42)
    answer = answers()[42]
    env.step(a_wrong_word(answer))
    text, reward, terminated, truncated, info = env.step(answer.upper())
    assert text.startswith("g g g g g\nYou found the word")
    assert (reward, terminated, truncated) == (1.0, True, False)
    assert info["won"] is True and info["guesses"] == 2
    assert env.step(answer)[0] == "The game is over. Reset to play again."


def test_invalid_word_is_answered_in_the_envs_words_and_uses_a_guess() -> None:
    env = WordleEnv()
    env.reset(task_id=0)
    text, reward, terminated, truncated, info = env.step("xqzvw")
    assert text == (
        "invalid word: 'xqzvw' is not a 5-letter word in the vocabulary. It still uses up a guess; 5 guesses left."
    )
    assert (reward, terminated, truncated) == (0.0, False, False)
    assert info["invalid_action"] is True
    assert env.step("hello there")[0].startswith("invalid word: 'hello there'")


def test_six_misses_lose_and_reveal_the_word() -> None:
    env = WordleEnv()
    env.reset(task_id=7)
    answer = answers()[7]
    results = [env.step(a_wrong_word(answer)) for _ in range(6)]
    assert [r[2] for r in results] == [False] * 5 + [True]
    text, reward, _, truncated, info = results[-1]
    assert text.endswith(f"You are out of guesses. The word was {answer!r}.")
    assert reward == 0.0 and not truncated and info["won"] is False


def test_same_task_and_seed_replay_identically() -> None:
    actions = ["crane", "slate", "qqqqq", "pious", "mound", "light"]

    def play(task_id: int | None, seed: int | None) -> list[object]:
        env = WordleEnv()
        transcript: list[object] = [env.reset(task_id=task_id, seed=seed)]
        return transcript + [env.step(a) for a in actions]

    assert play(100, 1) == play(100, 2)  # the word depends on the task id only
    assert play(None, 123) == play(None, 123)
    assert play(None, 123) != play(None, 456)


def test_reset_reuses_an_instance_cleanly() -> None:
    env = WordleEnv()
    env.reset(task_id=3)
    env.step("crane")
    assert env.reset(task_id=3) == WordleEnv().reset(task_id=3)
    assert env.step(answers()[3])[1] == 1.0


@pytest.mark.parametrize("task_id", [-1, TEST.stop, 10**6, "3", True])
def test_unknown_task_ids_are_refused_with_the_valid_ranges(task_id: object) -> None:
    with pytest.raises(ValueError, match=f"train 0-{TRAIN.count - 1}, test {TRAIN.count}-"):
        WordleEnv().reset(task_id=task_id)  # type: ignore[arg-type]


def test_bad_settings_raise_value_error() -> None:
    with pytest.raises(ValueError, match="no reset options"):
        WordleEnv().reset(task_id=0, options={"hard": True})
    with pytest.raises(ValueError, match="max_guesses"):
        WordleEnv(max_guesses=0)


def test_close_twice_is_harmless() -> None:
    env = WordleEnv()
    env.reset(task_id=0)
    env.close()
    env.close()
