"""How task ids relate to AgentGym's ``data_idx``, with AgentGym's own code as the oracle.

AgentGym's TextCraft server (``agentenv-textcraft``, copied verbatim in ``agentgym_reference/``)
picks goal ``data_idx`` as ``sorted(tree.item_recipes_min_depth(1), key=depth)[data_idx % n]``:
a stable sort by depth, so items of one depth keep the order the tree met them in, which is the
order ``os.listdir`` gave the recipe files. Its recipes are textcraft 0.0.3's, file for file.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import random
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from agenthub_env_textcraft.recipes import data_dir, recipe_book

REFERENCE = Path(__file__).parent / "agentgym_reference"
Order = Callable[[list[str]], list[str]]


def reference() -> tuple[ModuleType, ModuleType]:
    """AgentGym's ``crafting_tree`` and ``environment`` modules, loaded as a package from the copy."""
    name = "agentgym_textcraft_reference"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            name, REFERENCE / "__init__.py", submodule_search_locations=[str(REFERENCE)]
        )
        assert spec is not None and spec.loader is not None
        package = importlib.util.module_from_spec(spec)
        sys.modules[name] = package
        spec.loader.exec_module(package)
    return importlib.import_module(f"{name}.crafting_tree"), importlib.import_module(f"{name}.environment")


class _Listing:
    """Stands in for ``os`` in AgentGym's ``crafting_tree``: ``listdir`` answers in a chosen order."""

    def __init__(self, order: Order) -> None:
        self.order = order

    def __getattr__(self, name: str) -> Any:
        return getattr(os, name)

    def listdir(self, path: str) -> list[str]:
        return self.order(os.listdir(path))


def agentgym_env(order: Order) -> Any:
    """AgentGym's ``TextCraftEnv`` on textcraft's recipes, read in ``order``."""
    crafting_tree, environment = reference()
    real = crafting_tree.os
    crafting_tree.os = _Listing(order)
    try:
        tree = crafting_tree.CraftingTree(minecraft_dir=data_dir())
    finally:
        crafting_tree.os = real
    return environment.TextCraftEnv(crafting_tree=tree, commands=None, goal=None)


@pytest.fixture
def own_global_random() -> Iterator[None]:
    """AgentGym's reset seeds the global ``random``; give it back as it was."""
    state = random.getstate()
    yield
    random.setstate(state)


def agentgym_goal(env: Any, data_idx: int) -> str:
    env.reset(data_idx=data_idx)  # AgentGym's own reset picks the goal
    return str(env.goal)


def test_with_files_listed_by_name_agentgym_data_idx_i_is_task_i(own_global_random: None) -> None:
    env = agentgym_env(sorted)
    goals = recipe_book().goals
    assert [agentgym_goal(env, i) for i in range(len(goals))] == list(goals)
    assert agentgym_goal(env, len(goals) + 7) == goals[7]  # AgentGym wraps data_idx modulo 544


# Under another listing the ids do not carry over: reversed name order, reproduced with AgentGym's
# code. (task id, its goal, that goal's data_idx there, or None if that tree has no such goal)
REVERSED_LISTING = [
    (0, "minecraft:acacia_planks", 146),
    (124, "minecraft:yellow_dye", 0),
    (125, "minecraft:acacia_boat", 420),
    (300, "minecraft:mossy_stone_bricks", 261),
    (420, "minecraft:anvil", 409),
    (495, "minecraft:netherite_block", 256),
    (543, "minecraft:purple_banner", 533),
]


def test_under_another_listing_agentgym_orders_and_even_chooses_goals_differently(own_global_random: None) -> None:
    env = agentgym_env(lambda names: sorted(names, reverse=True))
    theirs = [item for item, _ in sorted(env.crafting_tree.item_recipes_min_depth(1), key=lambda x: x[1])]
    ours = recipe_book().goals
    for task_id, goal, data_idx in REVERSED_LISTING:
        assert ours[task_id] == goal
        assert theirs.index(goal) == data_idx and agentgym_goal(env, data_idx) == goal
    assert sum(a == b for a, b in zip(ours, theirs, strict=True)) == 4  # of 544 positions
    assert len(set(ours) - set(theirs)) == 3  # its cycle filter kept other recipes, so other goals
