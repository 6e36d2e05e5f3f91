"""Registration, cheap discovery, and the task table against the scienceworld package it copies."""

from __future__ import annotations

import subprocess
import sys

import httpx
from scienceworld.constants import ID2TASK

from agenthub import EnvSpec, ServiceSettings, apply_env_defaults, get_plugin_host
from agenthub_env_sciworld.env import SIMPLIFICATIONS, SciWorldEnv
from agenthub_env_sciworld.oracle import SciWorldOracle
from agenthub_env_sciworld.tasks import (
    AGENTGYM_EXCLUDED,
    DEV_IDS,
    NUM_AGENTGYM_TASK_IDS,
    NUM_TASK_IDS,
    TASKS,
    TEST_IDS,
    TRAIN_IDS,
    task_id_of,
    task_of,
)


def test_env_is_registered_with_agentgym_defaults(sciworld_spec: EnvSpec) -> None:
    assert sciworld_spec.default_max_turns == 30
    assert sciworld_spec.oracle == "sciworld-oracle"
    assert list(sciworld_spec.resolved_splits()) == ["train", "dev", "test"]
    assert sciworld_spec.factory == "agenthub_env_sciworld.env:SciWorldEnv"


def test_service_defaults_bound_the_jvms_unless_the_user_says_otherwise(sciworld_spec: EnvSpec) -> None:
    chosen = apply_env_defaults(ServiceSettings(), sciworld_spec.service_defaults, env_name="sciworld")
    assert (chosen.max_sessions, chosen.idle_envs, chosen.ttl) == (8, 2, 300.0)
    mine = apply_env_defaults(ServiceSettings(max_sessions=3), sciworld_spec.service_defaults, env_name="sciworld")
    assert (mine.max_sessions, mine.idle_envs) == (3, 2)


def test_oracle_is_registered_for_sciworld_only() -> None:
    agent_spec = get_plugin_host().agent("sciworld-oracle")
    assert agent_spec.env == "sciworld"
    assert isinstance(agent_spec.make(), SciWorldOracle)


def test_importing_the_plugin_loads_neither_scienceworld_nor_py4j() -> None:
    code = (
        "import sys, agenthub_env_sciworld.plugin, agenthub_env_sciworld.tasks; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('scienceworld', 'py4j')))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_splits_cover_agentgyms_ids_once_and_nothing_else() -> None:
    assert (len(TRAIN_IDS), len(DEV_IDS), len(TEST_IDS)) == (2312, 1156, 1171)
    assert sorted(TRAIN_IDS + DEV_IDS + TEST_IDS) == list(range(NUM_AGENTGYM_TASK_IDS))
    assert NUM_AGENTGYM_TASK_IDS == 4639 and NUM_TASK_IDS == 7207
    assert [task.num for task in TASKS if task.first_id >= NUM_AGENTGYM_TASK_IDS] == sorted(
        AGENTGYM_EXCLUDED, key=lambda num: tuple(map(int, num.split("-")))
    )


def test_ids_map_to_tasks_and_back() -> None:
    assert task_of(0)[0].name == "boil" and task_of(0)[1] == 0
    assert task_id_of("find-living-thing", 0) == 2936 and task_id_of("4-1", 0) == 2936
    for task_id in range(0, NUM_TASK_IDS, 97):
        task, variation = task_of(task_id)
        assert task_id_of(task.name, variation) == task_id


def test_task_table_numbering_and_splits_match_the_package_and_agentgym(sciworld_env: SciWorldEnv) -> None:
    """Rebuild AgentGym's game list the way its server does, from the package, and compare every id."""
    server = sciworld_env.jvm.server
    assert [task.num for task in sorted(TASKS, key=lambda t: list(ID2TASK).index(t.num))] == list(ID2TASK)
    games = []
    for num, name in ID2TASK.items():
        ours = next(task for task in TASKS if task.num == num)
        assert ours.name == name
        assert ours.variations == server.getTaskMaxVariations(name)
        server.load(name, 0, "", False)
        train, dev, test = (
            list(server.getVariationsTrain()),
            list(server.getVariationsDev()),
            list(server.getVariationsTest()),
        )
        assert train == list(range(ours.train))
        assert dev == list(range(ours.train, ours.train + ours.dev))
        assert test == list(range(ours.train + ours.dev, ours.variations))
        if num not in AGENTGYM_EXCLUDED:
            games += [(name, variation) for variation in range(ours.variations)]
    assert [(task_of(i)[0].name, task_of(i)[1]) for i in range(NUM_AGENTGYM_TASK_IDS)] == games
    assert sorted(str(server.getPossibleSimplifications()).split(", ")) == sorted(SIMPLIFICATIONS)


def test_v1_info_carries_agentgyms_action_list_as_instructions(sciworld_url: str) -> None:
    """Models get a system prompt: AgentGym's SciWorld action list, and the reply format this env reads."""
    info = httpx.get(f"{sciworld_url}/v1/info", timeout=30).json()
    instructions = info["instructions"]
    for action in ("open OBJ", "connect OBJ to OBJ", "pour OBJ into OBJ", "focus on OBJ", "wait1", "inventory"):
        assert action in instructions
    assert instructions.rstrip().endswith("Reply with the action only.")
