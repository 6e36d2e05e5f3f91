"""``env=gym:ID``: real gymnasium envs served over real servers on loopback."""

from __future__ import annotations

import json
import string
import subprocess
import sys
from pathlib import Path
from typing import Any

import gymnasium
import pytest
from gymnasium import spaces

from agenthub import SyncEnvClient, get_plugin_host
from agenthub.errors import ConfigError
from agenthub.gymnasium.importer import GymTextEnv, ansi_to_text, gym_env_spec
from agenthub.service.launcher import ThreadedServer
from agenthub.service.settings import ServiceSettings
from agenthub.testing.conformance import check_env
from agenthub.types import ToolCall

# FrozenLake 4x4 without slipping: this path walks from S to G.
WINNING_PATH = ["right", "right", "down", "down", "down", "right"]


class EchoRoom(gymnasium.Env[str, str]):
    """A gymnasium env with Text observations and actions: say the room's word to leave."""

    def __init__(self) -> None:
        self.observation_space = spaces.Text(64, charset=string.ascii_letters + " .")
        self.action_space = spaces.Text(64, charset=string.ascii_letters + " .")
        self._word = ""

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        super().reset(seed=seed)
        self._word = ["apple", "river", "stone"][int(self.np_random.integers(3))]
        return f"The door opens for the word {self._word}.", {}

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        if action.strip() == self._word:
            return "The door opens.", 1.0, True, False, {"is_success": True}
        return "The door stays shut.", 0.0, False, False, {}


gymnasium.register("EchoRoom-v0", entry_point=EchoRoom, max_episode_steps=5)


def render_cartpole(env: gymnasium.Env[Any, Any], observation: Any) -> str:
    """A text renderer a user would name with ``env_kwargs.render``."""
    position, velocity, angle, _ = (float(v) for v in observation)
    return f"cart at {position:+.2f} moving {velocity:+.2f}; pole leaning {angle:+.3f} rad"


def test_frozenlake_passes_every_conformance_check_through_a_server() -> None:
    report = check_env("gym:FrozenLake-v1", agent="random")
    assert report.passed, report.summary()


def test_a_text_env_is_served_as_is_and_won_by_saying_the_word() -> None:
    spec = gym_env_spec("gym:EchoRoom-v0")
    assert spec.default_max_turns == 5 and spec.resolved_splits()["test"].count == 1000
    with ThreadedServer(spec, ServiceSettings()) as server, SyncEnvClient(server.url) as client:
        created = client.create_session(task_id=7)
        word = created.observation.split()[-1].rstrip(".")
        assert client.step(created.id, "wrong").reward == 0.0
        won = client.step(created.id, word)
        assert won.terminated and won.reward == 1.0 and won.info["won"] is True
        assert "available_actions" not in won.info  # free text: there is no list to offer
        # the task id is the reset seed: the same task is the same room
        again = client.create_session(task_id=7)
        assert again.observation == created.observation


def test_discrete_actions_by_name_or_number_and_the_goal_is_a_win() -> None:
    env = GymTextEnv("FrozenLake-v1", make_kwargs={"is_slippery": False})
    text, info = env.reset(task_id=0)
    assert text.splitlines()[0] == "[S]FFF" and info["available_actions"] == ["left", "down", "right", "up"]
    assert env.step("2")[0].splitlines()[1] == "S[F]FF"  # "2" is right, by number
    for move in WINNING_PATH[1:-1]:
        assert env.step(f" {move.upper()}. ")[1] == 0.0  # names are case- and punctuation-tolerant
    _, reward, terminated, truncated, info = env.step(WINNING_PATH[-1])
    assert (reward, terminated, truncated, info["won"]) == (1.0, True, False, True)
    assert env.step("left")[0] == "The episode is over. Reset to play again."


def test_an_invalid_action_is_answered_in_words_and_changes_nothing() -> None:
    env = GymTextEnv("FrozenLake-v1")
    first, _ = env.reset(task_id=3)
    text, reward, terminated, _, info = env.step("jump over the hole")
    assert "is not an action here. Reply with one of: left, down, right, up." in text
    assert (reward, terminated, info["invalid_action"]) == (0.0, False, True)
    text, *_ = env.step(ToolCall(name="move", arguments={}))
    assert "a call to move" in text
    assert env.step("7")[4]["invalid_action"] is True  # out of range
    assert env.reset(task_id=3)[0] == first


def test_ansi_colours_are_dropped_and_highlighted_cells_bracketed() -> None:
    assert ansi_to_text("\n\x1b[41mS\x1b[0mFFF\nFHFH\n") == "[S]FFF\nFHFH"
    assert ansi_to_text("|\x1b[34;1mR\x1b[0m: |\x1b[43m \x1b[0m:G|") == "|R: |[ ]:G|"


def test_a_non_text_env_needs_a_renderer_and_says_how(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"not text, and has no 'ansi' render mode; .*env_kwargs.render="):
        GymTextEnv("CartPole-v1")
    env = GymTextEnv("CartPole-v1", render=render_cartpole)
    text, info = env.reset(task_id=1)
    assert text.startswith("cart at ") and info["available_actions"] == ["push left", "push right"]
    assert env.step("push right")[0].startswith("cart at ")


def test_action_names_must_match_the_action_space() -> None:
    with pytest.raises(ConfigError, match=r"has 4 actions, so action_names needs 4 distinct names"):
        GymTextEnv("FrozenLake-v1", action_names=["w", "a", "s"])
    env = GymTextEnv("FrozenLake-v1", action_names=["a", "s", "d", "w"])
    assert env.reset(task_id=0)[1]["available_actions"] == ["a", "s", "d", "w"]


def test_unknown_ids_and_modules_are_explained() -> None:
    with pytest.raises(ConfigError, match=r"gymnasium has no environment 'NoSuchEnv-v0'.*gym:package:ID"):
        get_plugin_host().env("gym:NoSuchEnv-v0")
    with pytest.raises(ConfigError, match=r"cannot import 'no_such_package'.*pip install"):
        gym_env_spec("gym:no_such_package:Thing-v0")


def test_third_party_ids_load_their_module_first() -> None:
    spec = gym_env_spec("gym:minigrid:MiniGrid-Empty-5x5-v0")  # minigrid registers its ids on import
    assert spec.name == "gym:minigrid:MiniGrid-Empty-5x5-v0" and spec.default_max_turns == 100


def test_eval_of_the_random_agent_on_a_gym_env_from_the_command_line(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "agenthub", "eval", "env=gym:FrozenLake-v1", "agent=random", "n=6", "k=2",
         "env_kwargs.is_slippery=false", f"runs_dir={tmp_path}", "run_id=fl", "progress=false"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads((tmp_path / "fl" / "eval.json").read_text())
    assert report["overall"]["samples"] == 12 and sum(report["overall"]["outcomes"].values()) == 12
    assert "gym:FrozenLake-v1 · agent random" in done.stdout
