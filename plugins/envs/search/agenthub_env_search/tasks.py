"""Task ids of the generated default: the train questions first, then the test questions.

The counts are written here, not read from the data, so that registering the plugin generates
nothing; a test checks them against the generator.
"""

from __future__ import annotations

from agenthub import TaskSplit

TRAIN_COUNT = 4000
TEST_COUNT = 1000
SPLITS: dict[str, TaskSplit] = {
    "train": TaskSplit.range(0, TRAIN_COUNT),
    "test": TaskSplit.range(TRAIN_COUNT, TRAIN_COUNT + TEST_COUNT),
}
