"""Task ids and splits: which maze each integer task id stands for.

- ``test`` (0-24): LMRL-Gym's double-T maze from AgentGym's 25 start positions,
  the set AgentGym reports results on;
- ``train`` (1,000-100,999) and ``test-random`` (1,000,000-1,000,999): generated
  mazes, each drawn from an RNG seeded with its task id alone.
"""

from __future__ import annotations

import random

from agenthub import TaskSplit

from agenthub_env_maze.grid import DOUBLE_T_STARTS, Maze, double_t_maze, generate_maze

_TRAIN_START = 1_000
TRAIN = TaskSplit.range(_TRAIN_START, 101_000)
TEST = TaskSplit.range(0, len(DOUBLE_T_STARTS))
TEST_RANDOM = TaskSplit.range(1_000_000, 1_001_000)
SPLITS: dict[str, TaskSplit] = {"train": TRAIN, "test": TEST, "test-random": TEST_RANDOM}


def maze_for_task(task_id: object) -> Maze:
    """The maze of ``task_id``; ``ValueError`` for an id that is in no split."""
    if isinstance(task_id, bool) or not isinstance(task_id, int):
        raise ValueError(f"maze task ids are integers, got {task_id!r}; {describe_splits()}")
    if task_id in TEST:
        return double_t_maze(DOUBLE_T_STARTS[task_id])
    if task_id in TRAIN or task_id in TEST_RANDOM:
        # A string seed hashes the same way in every process, unlike hash() of a tuple.
        return generate_maze(random.Random(f"agenthub-maze:{task_id}"))
    raise ValueError(f"unknown maze task id {task_id}; {describe_splits()}")


def train_task_for_seed(seed: int | None) -> int:
    """A train task drawn with ``seed``, for a reset that names no task."""
    return _TRAIN_START + random.Random(seed).randrange(TRAIN.count)


def describe_splits() -> str:
    parts = [f"{name}: {split.start}-{split.stop - 1}" for name, split in SPLITS.items() if split.stop is not None]
    return "valid ids are " + ", ".join(parts)
