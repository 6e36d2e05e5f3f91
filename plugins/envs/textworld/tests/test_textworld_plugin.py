"""Registration: the entry point, the spec, and cheap discovery."""

from __future__ import annotations

import subprocess
import sys

import httpx

from agenthub import EnvSpec, get_plugin_host
from agenthub_env_textworld.env import TextWorldEnv
from agenthub_env_textworld.oracle import TextWorldOracle


def test_env_is_registered_with_its_turn_limit_splits_and_oracle(textworld_spec: EnvSpec) -> None:
    assert textworld_spec.default_max_turns == 50
    assert textworld_spec.oracle == "textworld-oracle"
    splits = textworld_spec.resolved_splits()
    assert list(splits) == ["train", "test"]
    assert (splits["train"].count, splits["test"].count) == (15_000, 1_500)
    assert textworld_spec.service_defaults == {"step_timeout": 900.0}  # resets may wait for generation
    env = textworld_spec.make()
    assert isinstance(env, TextWorldEnv)
    env.close()


def test_oracle_is_registered_for_textworld_only() -> None:
    agent_spec = get_plugin_host().agent("textworld-oracle")
    assert agent_spec.env == "textworld"
    assert isinstance(agent_spec.make(), TextWorldOracle)


def test_importing_the_plugin_does_not_load_textworld() -> None:
    code = (
        "import sys, agenthub_env_textworld.plugin, agenthub_env_textworld.tasks; "
        "print(any(m.split('.')[0] in ('textworld', 'jericho') for m in sys.modules))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"


def test_v1_info_carries_the_commands_as_instructions(textworld_url: str) -> None:
    """Models get a system prompt: the command set TextWorld's own ``help`` lists, and the reply format."""
    info = httpx.get(f"{textworld_url}/v1/info", timeout=30).json()
    instructions = info["instructions"]
    for command in ("go north", "take ... from ...", "unlock ... with ...", "prepare meal"):
        assert command in instructions
    assert instructions.rstrip().endswith("Reply with the command only.")
