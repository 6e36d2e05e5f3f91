"""The gymnasium adapter passes gymnasium's own env checker."""

from __future__ import annotations

import warnings

import pytest
from gymnasium.utils.env_checker import check_env

import agenthub
from agenthub import LocalServer, SyncEnvClient


def test_make_passes_gymnasium_check_env() -> None:
    env = agenthub.make("guess")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # check_env warns that the env has no spec/render modes
            check_env(env, skip_render_check=True)
        observation, info = env.reset(seed=123)
        assert observation in env.observation_space
        assert "available_actions" in info
        observation, reward, _, truncated, info = env.step("guess 8")
        assert isinstance(reward, float) and not truncated
    finally:
        env.close()
        env.close()  # twice is allowed


def test_seed_picks_the_task_and_options_pick_it_explicitly(guess_server: LocalServer) -> None:
    with SyncEnvClient(guess_server.url) as client:
        env = client.as_gym(split="test")
        first, _ = env.reset(seed=7)
        assert env.reset(seed=7)[0] == first
        env.reset(options={"task_id": 10_001})
        assert client.session_state(env._session_id or "").task_id == 10_001
        env.close()


def test_unknown_env_name_fails_before_starting_a_server() -> None:
    with pytest.raises(agenthub.UnknownNameError, match="did you mean 'guess'"):
        agenthub.make("gues")


def test_text_space_admits_real_text() -> None:
    env_space = agenthub.RemoteGymEnv.__init__  # noqa: F841 - spaces are built per instance
    from agenthub.gymnasium.remote_env import TEXT_CHARSET

    for text in ("You see a red key 1 step forward.\n> look", "Café — naïve 日本語, 100% (ok)!\t"):
        assert set(text) <= set(TEXT_CHARSET)
