"""Registration: the entry point, the spec, and cheap discovery."""

from __future__ import annotations

import subprocess
import sys

from agenthub import EnvSpec, get_plugin_host
from agenthub_env_textcraft.env import TextCraftEnv
from agenthub_env_textcraft.oracle import TextCraftOracle
from agenthub_env_textcraft.splits import NUM_TASKS, TEST_IDS, TRAIN_IDS


def test_env_is_registered_with_agentgym_defaults(spec: EnvSpec) -> None:
    assert spec.default_max_turns == 30
    assert spec.oracle == "textcraft-oracle"
    assert list(spec.resolved_splits()) == ["train", "test"]
    assert isinstance(spec.make(), TextCraftEnv)


def test_oracle_is_registered_for_textcraft_only() -> None:
    agent_spec = get_plugin_host().agent("textcraft-oracle")
    assert agent_spec.env == "textcraft"
    assert isinstance(agent_spec.make(), TextCraftOracle)


def test_splits_cover_every_task_once() -> None:
    assert len(TEST_IDS) == 100
    assert len(TRAIN_IDS) == NUM_TASKS - 100
    assert sorted(TRAIN_IDS + TEST_IDS) == list(range(NUM_TASKS))


def test_importing_the_plugin_does_not_load_textcraft() -> None:
    code = "import sys, agenthub_env_textcraft.plugin; print(any(m.startswith('textcraft') for m in sys.modules))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"
