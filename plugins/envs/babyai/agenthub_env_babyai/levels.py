"""The 40 BabyAI levels of AgentGym and how a task id selects one.

AgentGym's server maps task (``data_idx``) ``i`` to level ``i % 40 + 1`` of this
list and to minigrid seed ``i // 40``; we keep that mapping so that a task id
means the same game here as in published AgentGym and AgentGym-RL results.
No minigrid import here: the plugin module reads the splits without loading it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agenthub import TaskId, TaskSplit

# Level n (1-based) of AgentGym's ``all_levels``. AgentGym names ``BabyAI-GoToObjS6-v0``;
# minigrid 3 withdrew that id for a registry bug and ships the fixed ``-v1``.
LEVELS: tuple[str, ...] = (
    "BabyAI-GoToRedBallGrey-v0",
    "BabyAI-GoToRedBall-v0",
    "BabyAI-GoToRedBallNoDists-v0",
    "BabyAI-GoToObjS6-v1",
    "BabyAI-GoToLocalS8N7-v0",
    "BabyAI-GoToObjMazeS7-v0",
    "BabyAI-GoToImpUnlock-v0",
    "BabyAI-GoToSeqS5R2-v0",
    "BabyAI-GoToRedBlueBall-v0",
    "BabyAI-GoToDoor-v0",
    "BabyAI-GoToObjDoor-v0",
    "BabyAI-Open-v0",
    "BabyAI-OpenRedDoor-v0",
    "BabyAI-OpenDoorLoc-v0",
    "BabyAI-OpenRedBlueDoorsDebug-v0",
    "BabyAI-OpenDoorsOrderN4Debug-v0",
    "BabyAI-Pickup-v0",
    "BabyAI-UnblockPickup-v0",
    "BabyAI-PickupLoc-v0",
    "BabyAI-PickupDistDebug-v0",
    "BabyAI-PickupAbove-v0",
    "BabyAI-PutNextLocalS6N4-v0",
    "BabyAI-PutNextS7N4Carrying-v0",
    "BabyAI-Unlock-v0",
    "BabyAI-UnlockLocalDist-v0",
    "BabyAI-KeyInBox-v0",
    "BabyAI-UnlockPickupDist-v0",
    "BabyAI-BlockedUnlockPickup-v0",
    "BabyAI-UnlockToUnlock-v0",
    "BabyAI-ActionObjDoor-v0",
    "BabyAI-FindObjS7-v0",
    "BabyAI-KeyCorridorS6R3-v0",
    "BabyAI-OneRoomS20-v0",
    "BabyAI-MoveTwoAcrossS8N9-v0",
    "BabyAI-SynthS5R2-v0",
    "BabyAI-SynthLoc-v0",
    "BabyAI-SynthSeq-v0",
    "BabyAI-MiniBossLevel-v0",
    "BabyAI-BossLevel-v0",
    "BabyAI-BossLevelNoUnlock-v0",
)

# Levels no oracle can finish with AgentGym's action set: KeyInBox hides the key in a
# box, and the action set has no way to open a box; minigrid's bot does not solve
# PutNext...Carrying (its docstring says so).
UNSOLVABLE_BY_ORACLE: frozenset[str] = frozenset({"BabyAI-PutNextS7N4Carrying-v0", "BabyAI-KeyInBox-v0"})

SEEDS_PER_LEVEL_IN_TEST = 10
TEST_TASKS = TaskSplit.range(0, len(LEVELS) * SEEDS_PER_LEVEL_IN_TEST)
TRAIN_START = TEST_TASKS.count
TRAIN_TASKS = TaskSplit.range(TRAIN_START, TRAIN_START + 40_000)
SPLITS: dict[str, TaskSplit] = {"train": TRAIN_TASKS, "test": TEST_TASKS}

_AGENTGYM_ITEM = re.compile(r"^(?:babyai_)?(\d+)$")


@dataclass(frozen=True)
class Level:
    """The game a task id stands for."""

    task_id: int
    number: int
    """1-based position in :data:`LEVELS`, as AgentGym numbers them."""
    name: str
    seed: int


def parse_task_id(task_id: TaskId) -> int:
    """An integer task id from ``12``, ``"12"`` or AgentGym's item id ``"babyai_12"``."""
    if isinstance(task_id, bool):
        raise ValueError(f"babyai task ids are non-negative integers, got {task_id!r}")
    if isinstance(task_id, int):
        number = task_id
    else:
        found = _AGENTGYM_ITEM.match(task_id.strip())
        if found is None:
            raise ValueError(
                f"babyai task ids are non-negative integers (or AgentGym item ids like 'babyai_12'), got {task_id!r}"
            )
        number = int(found.group(1))
    if number < 0:
        raise ValueError(f"babyai task ids are non-negative integers, got {task_id!r}")
    return number


def level_of(task_id: TaskId) -> Level:
    """The level and seed of ``task_id``: level ``id % 40 + 1``, seed ``id // 40``, as in AgentGym."""
    number = parse_task_id(task_id)
    index = number % len(LEVELS)
    return Level(task_id=number, number=index + 1, name=LEVELS[index], seed=number // len(LEVELS))
