"""Task ids and splits: task ``i`` is the ``i``-th word of the shipped answer list.

The count is written here, not read from the data file, so that registering the
plugin reads no file; a test checks that it matches the file.
"""

from __future__ import annotations

import random

from agenthub import TaskSplit

ANSWER_COUNT = 2114
TEST_SIZE = 300
TRAIN = TaskSplit.range(0, ANSWER_COUNT - TEST_SIZE)
TEST = TaskSplit.range(ANSWER_COUNT - TEST_SIZE, ANSWER_COUNT)
SPLITS: dict[str, TaskSplit] = {"train": TRAIN, "test": TEST}


def check_task_id(task_id: object) -> int:
    """``task_id`` as an answer index; ``ValueError`` for an id that is in no split."""
    if isinstance(task_id, bool) or not isinstance(task_id, int) or not 0 <= task_id < ANSWER_COUNT:
        raise ValueError(
            f"unknown wordle task id {task_id!r}; valid ids are integers: "
            f"train 0-{ANSWER_COUNT - TEST_SIZE - 1}, test {ANSWER_COUNT - TEST_SIZE}-{ANSWER_COUNT - 1}"
        )
    return task_id


def train_task_for_seed(seed: int | None) -> int:
    """A train task drawn with ``seed``, for a reset that names no task."""
    return random.Random(seed).randrange(TRAIN.count)  # the train split starts at 0
