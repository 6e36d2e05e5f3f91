"""Hostile replies of a megabyte: folded and measured in linear time, refused before the interpreter sees them."""

from __future__ import annotations

from agenthub.testing import MEGABYTE_PARSE_CPU_S, cpu_seconds_at_most, hostile_actions
from agenthub_env_textworld.env import MAX_COMMAND_BYTES, TextWorldEnv
from agenthub_env_textworld.games import GameCache
from agenthub_env_textworld.tasks import task_id

COOKING = task_id("train", "cooking", 1, 0)


def test_a_megabyte_of_hostile_text_is_refused_promptly_without_reaching_the_game(cache: GameCache) -> None:
    env = TextWorldEnv(cache_dir=cache.root)
    try:
        env.reset(task_id=COOKING)
        for shape, action in hostile_actions(1_000_000).items():
            with cpu_seconds_at_most(MEGABYTE_PARSE_CPU_S, shape):  # linear: milliseconds; quadratic: hours
                observation, reward, terminated, _, info = env.step(action)
            assert info["invalid_action"] is True and (reward, terminated) == (0.0, False), shape
            assert info["moves"] == 0 and len(observation) < 2_000, shape
            # Folded, "5 <whitespace> x" is three characters, which the game reads (and does not understand).
            assert shape == "whitespace" or f"at most {MAX_COMMAND_BYTES}" in observation, shape
    finally:
        env.close()
