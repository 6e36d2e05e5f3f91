"""TextCraft's task ids and splits, importable without loading the recipes.

Task ``i`` is the ``i``-th goal when every item with a recipe tree of depth 1 or
more is sorted by that depth, shallow first, ties in name order of the recipe files.
``recipes.RecipeBook.goals`` is that list; a test checks that ``NUM_TASKS`` matches it.
It is AgentGym's ``data_idx`` ``i`` (item id ``textcraft_<i>``) only where AgentGym's
server lists the recipe files in name order: its sort keeps ``os.listdir``'s order
among equal depths (the plugin README, "AgentGym's data_idx";
tests/test_textcraft_agentgym_ids.py runs AgentGym's own code to pin it).

AgentGym's own id lists (374 train, 100 test) live on the Hugging Face hub,
which an env must not need at run time, so the splits here are fixed by rule:
``test`` is 100 ids spread evenly over the whole depth-sorted range, so every
depth is represented in proportion, and ``train`` is every other id.
"""

from __future__ import annotations

from agenthub import TaskSplit

NUM_TASKS = 544
"""Goals of depth >= 1 in textcraft 0.0.3's recipes (AgentGym's ``item_recipes_min_depth(1)``)."""

NUM_TEST_TASKS = 100

TEST_IDS: list[int] = [int((k + 0.5) * NUM_TASKS / NUM_TEST_TASKS) for k in range(NUM_TEST_TASKS)]
_TEST_SET = frozenset(TEST_IDS)
TRAIN_IDS: list[int] = [i for i in range(NUM_TASKS) if i not in _TEST_SET]

SPLITS: dict[str, TaskSplit] = {
    "train": TaskSplit.of(list(TRAIN_IDS)),
    "test": TaskSplit.of(list(TEST_IDS)),
}
