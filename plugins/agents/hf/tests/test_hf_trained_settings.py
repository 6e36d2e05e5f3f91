"""A model directory's ``agenthub.json``: agent ``hf`` plays the model as it was trained unless told otherwise."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from agenthub import ConfigError, get_plugin_host

from agenthub_agent_hf import HFPolicy
from agenthub_agent_hf.trained import MODEL_SETTINGS_FILE


@pytest.fixture
def trained_dir(model_dir: Path, tmp_path: Path) -> Path:
    """The tiny model with the file a trainer writes: one token a turn, a 64-token episode, top_p 0.9."""
    directory = Path(shutil.copytree(model_dir, tmp_path / "model"))
    settings = {"max_tokens": 1, "max_context": 64, "top_p": 0.9, "system_prompt": None, "unknown_later": 3}
    (directory / MODEL_SETTINGS_FILE).write_text(json.dumps({"trainer": "trl", "agent": settings}))
    return directory


def make(model: Path, **settings: object) -> HFPolicy:
    agent = get_plugin_host().agent("hf").make(model=str(model), device="cpu", **settings)
    assert isinstance(agent, HFPolicy)
    return agent


def test_settings_the_model_was_trained_with_are_taken_and_said(
    trained_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    agent = make(trained_dir)
    assert (agent.sampling.max_tokens, agent.max_context, agent.sampling.top_p) == (1, 64, 0.9)
    assert agent.describe()["as_trained"] == {"max_tokens": 1, "max_context": 64, "top_p": 0.9}
    assert (
        f"agent hf: as trained ({trained_dir / MODEL_SETTINGS_FILE}): max_tokens=1, max_context=64, top_p=0.9; "
        "agent.KEY=VALUE overrides any of them"
    ) in capsys.readouterr().err.splitlines()


def test_a_setting_given_wins_over_the_model_dir(trained_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    agent = make(trained_dir, max_tokens=7)
    assert (agent.sampling.max_tokens, agent.max_context) == (7, 64)
    assert "max_tokens" not in capsys.readouterr().err


def test_a_model_without_the_file_keeps_the_agents_defaults(
    model_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    agent = make(model_dir)
    assert agent.sampling.max_tokens == 256 and agent.describe()["as_trained"] == {}
    assert "as trained" not in capsys.readouterr().err


def test_a_broken_file_says_what_to_do(trained_dir: Path) -> None:
    (trained_dir / MODEL_SETTINGS_FILE).write_text("{not json")
    with pytest.raises(ConfigError, match=r"agenthub\.json is not readable JSON.*delete it and give agent\.max_tokens"):
        make(trained_dir)
    (trained_dir / MODEL_SETTINGS_FILE).write_text('{"max_tokens": 1}')
    with pytest.raises(ConfigError, match=r'has no "agent" object of settings'):
        make(trained_dir)
