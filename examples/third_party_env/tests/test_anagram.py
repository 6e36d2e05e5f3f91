"""Tests of the anagram env: the protocol's conformance checks through a real server, and its rules."""

from __future__ import annotations

from agenthub import get_plugin_host
from agenthub.testing import conformance_tests

from agenthub_env_anagram.env import AnagramEnv, words

# One test per conformance check, each against a real server on 127.0.0.1.
test_conformance = conformance_tests("anagram")


def test_the_plugin_is_discovered_with_its_oracle_and_prompt() -> None:
    spec = get_plugin_host().env("anagram")
    assert spec.oracle == "anagram-oracle" and spec.instructions and "anagram game" in spec.instructions


def test_every_task_is_a_real_scramble_of_a_listed_word_and_the_same_game_each_time() -> None:
    env = AnagramEnv()
    for task_id in range(0, 2200, 37):
        observation, info = env.reset(task_id=task_id)
        scrambled = observation.rsplit(":", 1)[-1].strip()
        matches = [w for w in info["available_actions"] if sorted(w) == sorted(scrambled)]
        assert len(matches) == 1 and matches[0] != scrambled and matches[0] in words()
        assert env.reset(task_id=task_id)[0] == observation


def test_the_word_wins_and_two_wrong_anagrams_lose() -> None:
    env = AnagramEnv()
    env.reset(task_id=0)
    word = words()[0]
    assert env.step(word.upper() + ".")[1:3] == (1.0, True)
    env.reset(task_id=words().index("stone"))
    first = env.step("notes")  # same letters, wrong word: costs an answer
    assert first[1:3] == (0.0, False) and "1 answer left" in first[0]
    last = env.step("tones")
    assert last[2] is True and last[4]["won"] is False and "the word was stone" in last[0]


def test_answers_that_are_not_anagrams_cost_nothing_and_are_explained() -> None:
    env = AnagramEnv()
    env.reset(task_id=1)
    for reply in ["", "two words", "zzzzzz"]:
        text, reward, terminated, _, info = env.step(reply)
        assert info["invalid_action"] and (reward, terminated) == (0.0, False)
        assert "letters" in text
    assert env.step(words()[1])[2] is True
