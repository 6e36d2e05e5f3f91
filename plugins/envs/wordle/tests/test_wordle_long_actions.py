"""Hostile replies of a megabyte: the guess parser reads them in linear time, and a long reasoning before
"Action:" is still a guess, up to the env's limit."""

from __future__ import annotations

from agenthub import EnvSpec
from agenthub.testing import MEGABYTE_PARSE_CPU_S, cpu_seconds_at_most, hostile_actions

from agenthub_env_wordle.env import WordleEnv, parse_guess
from agenthub_env_wordle.plugin import MAX_ACTION_CHARS


def test_a_megabyte_of_hostile_text_is_read_promptly() -> None:
    env = WordleEnv()
    for shape, action in hostile_actions(1_000_000).items():
        env.reset(task_id=0)
        with cpu_seconds_at_most(MEGABYTE_PARSE_CPU_S, shape):  # linear: milliseconds; quadratic: hours
            parse_guess(action)
            observation, _, _, _, info = env.step(action)
        assert info["invalid_action"] is True and len(observation) < 2_000, shape


def test_a_reply_with_long_reasoning_before_its_action_is_a_guess_within_the_limit(wordle_spec: EnvSpec) -> None:
    reasoning = "Thought: r and e are in the word, a is not; the second letter is h. " * 900
    reply = f"{reasoning}\n\nAction:\ns h i r e"
    limit = wordle_spec.info().max_action_chars
    assert 60_000 < len(reply) <= MAX_ACTION_CHARS == wordle_spec.max_action_chars == limit
    assert parse_guess(reply) == "shire"
