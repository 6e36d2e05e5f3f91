"""Hostile replies of a megabyte: the action reader (lower-case, whitespace folded, one dict lookup) is linear."""

from __future__ import annotations

from agenthub import get_plugin_host
from agenthub.testing import MEGABYTE_PARSE_CPU_S, cpu_seconds_at_most, hostile_actions

from agenthub_env_babyai.env import BabyAIEnv


def test_a_megabyte_of_hostile_text_is_answered_promptly_and_changes_nothing() -> None:
    env = BabyAIEnv()
    first, _ = env.reset(task_id=0)
    try:
        for shape, action in hostile_actions(1_000_000).items():
            with cpu_seconds_at_most(MEGABYTE_PARSE_CPU_S, shape):  # linear: milliseconds; quadratic: hours
                observation, reward, terminated, _, info = env.step(action)
            assert (reward, terminated, info["action_is_valid"]) == (0.0, False, False), shape
            assert len(observation) < 5_000, shape  # the refusal does not echo the reply
    finally:
        env.close()
    assert first


def test_babyai_keeps_the_default_limit() -> None:
    # Its actions are under 50 characters and a reply must be the action alone.
    assert (
        get_plugin_host().env("babyai").info().max_action_chars
        == get_plugin_host().env("guess").info().max_action_chars
    )
