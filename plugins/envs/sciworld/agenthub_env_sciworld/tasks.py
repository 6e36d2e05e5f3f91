"""ScienceWorld's tasks, their variations, and agenthub's integer task ids; importable without a JVM.

Task ids follow AgentGym's SciWorld server (``agentenv-sciworld``), which
numbers its games by walking scienceworld's task list in order, skipping seven
tasks, and listing every variation ``0 .. max - 1`` of each: id ``i`` here is
AgentGym's ``data_idx`` ``i`` for ``0 <= i < 4639``. The seven tasks AgentGym
leaves out (their gold paths take 53 to 206 actions) follow, in the same
order, from 4639 to 7206; they are playable by id and belong to no split.

Each task's variations are split by scienceworld itself into contiguous
train, dev and test ranges (``get_variations_train/dev/test``); a task id is in
the split of its variation. ``TASKS`` copies those figures from scienceworld
1.2.3 so that listing splits never starts a JVM; a test checks them against
the package.
"""

from __future__ import annotations

from dataclasses import dataclass

from agenthub import TaskSplit


@dataclass(frozen=True)
class SciWorldTask:
    """One ScienceWorld task and the range of agenthub task ids that are its variations."""

    num: str
    """scienceworld's task number, e.g. ``"1-1"``."""
    name: str
    """scienceworld's task name, e.g. ``"boil"``."""
    variations: int
    train: int
    """Variations ``0 .. train - 1`` are the package's train set."""
    dev: int
    """The next ``dev`` variations are its dev set; the rest are its test set."""
    first_id: int = 0
    """The agenthub task id of variation 0."""

    @property
    def stop_id(self) -> int:
        return self.first_id + self.variations

    def split_of(self, variation: int) -> str:
        if variation < self.train:
            return "train"
        return "dev" if variation < self.train + self.dev else "test"


AGENTGYM_EXCLUDED = frozenset({"5-1", "5-2", "9-1", "9-2", "9-3", "10-1", "10-2"})
"""Tasks AgentGym's SciWorld server leaves out of its game list."""

# (number, name, variations, train, dev) in scienceworld 1.2.3's task order (tasks.json).
_PACKAGE_TASKS: tuple[tuple[str, str, int, int, int], ...] = (
    ("1-1", "boil", 30, 14, 7),
    ("1-2", "melt", 30, 14, 7),
    ("1-3", "freeze", 30, 14, 7),
    ("1-4", "change-the-state-of-matter-of", 30, 14, 7),
    ("2-1", "use-thermometer", 540, 270, 135),
    ("2-2", "measure-melting-point-known-substance", 436, 218, 109),
    ("2-3", "measure-melting-point-unknown-substance", 300, 150, 75),
    ("3-1", "power-component", 20, 10, 5),
    ("3-2", "power-component-renewable-vs-nonrenewable-energy", 20, 10, 5),
    ("3-3", "test-conductivity", 900, 450, 225),
    ("3-4", "test-conductivity-of-unknown-substances", 600, 300, 150),
    ("4-1", "find-living-thing", 300, 150, 75),
    ("4-2", "find-non-living-thing", 300, 150, 75),
    ("4-3", "find-plant", 300, 150, 75),
    ("4-4", "find-animal", 300, 150, 75),
    ("5-1", "grow-plant", 126, 62, 31),
    ("5-2", "grow-fruit", 126, 62, 31),
    ("6-1", "chemistry-mix", 32, 16, 8),
    ("6-2", "chemistry-mix-paint-secondary-color", 36, 18, 9),
    ("6-3", "chemistry-mix-paint-tertiary-color", 36, 18, 9),
    ("7-1", "lifespan-longest-lived", 125, 62, 31),
    ("7-2", "lifespan-shortest-lived", 125, 62, 31),
    ("7-3", "lifespan-longest-lived-then-shortest-lived", 125, 62, 31),
    ("8-1", "identify-life-stages-1", 14, 6, 3),
    ("8-2", "identify-life-stages-2", 10, 4, 2),
    ("9-1", "inclined-plane-determine-angle", 168, 84, 42),
    ("9-2", "inclined-plane-friction-named-surfaces", 1386, 692, 346),
    ("9-3", "inclined-plane-friction-unnamed-surfaces", 162, 80, 40),
    ("10-1", "mendelian-genetics-known-plant", 120, 60, 30),
    ("10-2", "mendelian-genetics-unknown-plant", 480, 240, 120),
)


def _number_tasks() -> tuple[SciWorldTask, ...]:
    ordered = [row for row in _PACKAGE_TASKS if row[0] not in AGENTGYM_EXCLUDED]
    ordered += [row for row in _PACKAGE_TASKS if row[0] in AGENTGYM_EXCLUDED]
    tasks, next_id = [], 0
    for num, name, variations, train, dev in ordered:
        tasks.append(SciWorldTask(num, name, variations, train, dev, first_id=next_id))
        next_id += variations
    return tuple(tasks)


TASKS: tuple[SciWorldTask, ...] = _number_tasks()
"""Every task, in task-id order: AgentGym's 23, then the 7 it leaves out."""

NUM_TASK_IDS = TASKS[-1].stop_id
"""7207: task ids are 0 .. 7206."""

NUM_AGENTGYM_TASK_IDS = next(t.first_id for t in TASKS if t.num in AGENTGYM_EXCLUDED)
"""4639: ids below this are AgentGym's ``data_idx`` and make up the splits."""

SPLIT_NAMES = ("train", "dev", "test")


def task_of(task_id: int) -> tuple[SciWorldTask, int]:
    """The task and variation of an agenthub task id (which must be in range)."""
    for task in TASKS:
        if task.first_id <= task_id < task.stop_id:
            return task, task_id - task.first_id
    raise ValueError(f"sciworld task ids are integers from 0 to {NUM_TASK_IDS - 1}, got {task_id!r}")


def task_id_of(name: str, variation: int) -> int:
    """The agenthub task id of a scienceworld task name (or number) and variation."""
    for task in TASKS:
        if name in (task.name, task.num):
            if not 0 <= variation < task.variations:
                raise ValueError(f"task {task.name!r} has variations 0 to {task.variations - 1}, got {variation}")
            return task.first_id + variation
    raise ValueError(f"unknown scienceworld task {name!r}; known tasks: {', '.join(t.name for t in TASKS)}")


def split_ids(split: str) -> list[int]:
    """The task ids of one split, in id order (AgentGym's tasks only)."""
    if split not in SPLIT_NAMES:
        raise ValueError(f"unknown sciworld split {split!r}; splits are {', '.join(SPLIT_NAMES)}")
    ids: list[int] = []
    for task in TASKS:
        if task.num in AGENTGYM_EXCLUDED:
            continue
        bounds = {"train": (0, task.train), "dev": (task.train, task.train + task.dev)}
        start, stop = bounds.get(split, (task.train + task.dev, task.variations))
        ids.extend(range(task.first_id + start, task.first_id + stop))
    return ids


TRAIN_IDS = split_ids("train")
DEV_IDS = split_ids("dev")
TEST_IDS = split_ids("test")

SPLITS: dict[str, TaskSplit] = {
    "train": TaskSplit.of(list(TRAIN_IDS)),
    "dev": TaskSplit.of(list(DEV_IDS)),
    "test": TaskSplit.of(list(TEST_IDS)),
}
