"""``SciWorldEnv``: ScienceWorld (scienceworld 1.2.3) behind agenthub's Environment protocol."""

from __future__ import annotations

import weakref
from collections.abc import Mapping, Sequence
from typing import Any

from agenthub import Action, StepTuple, TaskId, begin_reset

from .jvm import DEFAULT_HEAP_MB, ScienceWorldJVM
from .pool import DEFAULT_RECYCLE_AFTER, DEFAULT_SESSIONS_PER_JVM, JVMPool, JVMSlot, check_positive, shared_pool
from .tasks import AGENTGYM_EXCLUDED, NUM_TASK_IDS, TRAIN_IDS, SciWorldTask, task_of

DEFAULT_SEED = 0
"""The seed that picks a train task when ``reset`` gets neither a task id nor a seed."""

DEFAULT_STEP_LIMIT = 100
"""scienceworld's ``envStepLimit`` default, which AgentGym's server keeps: past 100 moves the episode ends."""

SIMPLIFICATIONS = ("teleportAction", "selfWateringFlowerPots", "openContainers", "openDoors", "noElectricalAction")
"""scienceworld 1.2.3's simplifications; ``"easy"`` means all of them."""

RESET_OPTIONS = ("valid_actions", "simplifications")

UNKNOWN_ACTION = "No known action matches that input."
"""How ScienceWorld answers an action its parser does not understand."""


def check_simplifications(value: object, task_name: str | None = None) -> str:
    """A comma-separated simplification string as scienceworld takes it (``""`` for none)."""
    if not isinstance(value, str):
        raise ValueError(f"simplifications must be a comma-separated string such as 'easy', got {value!r}")
    names = [name.strip() for name in value.split(",") if name.strip()]
    unknown = [name for name in names if name not in (*SIMPLIFICATIONS, "easy")]
    if unknown:
        raise ValueError(f"unknown simplification(s) {', '.join(unknown)}; known: easy, {', '.join(SIMPLIFICATIONS)}")
    electrical = task_name is not None and ("power-component" in task_name or "conductivity" in task_name)
    if electrical and "noElectricalAction" in names:
        raise ValueError(f"task {task_name!r} needs electrical actions; drop the noElectricalAction simplification")
    return ",".join(names)


def _give_back(pool: JVMPool, held: list[JVMSlot]) -> None:
    pool.release(held[0])


class SciWorldEnv:
    """ScienceWorld's elementary-science tasks; up to ``sessions_per_jvm`` instances share a JVM.

    The first observation is the task description, a newline, and the answer
    to ``look around``, as AgentGym's SciWorld client shows it. Actions are
    ScienceWorld's text commands (``open door to kitchen``, ``focus on
    thermometer``, ``wait1``, ...), answered by the simulator in its own words;
    one it cannot parse gets ``No known action matches that input.`` and
    ``info["invalid_action"] = True``.

    The simulator scores progress from 0 to 100 (``info["score"]``). The reward
    of a step is the change of score divided by 100, counted from 0 (a few
    tasks start with a point or two, which the first step pays), so an
    episode's rewards sum to its final score / 100: AgentGym-RL's reward. Completing the task (score 100) terminates the
    episode with ``info["won"] = True``; a wrong ``focus on`` drops the score to
    -100 and terminates it as lost. Past ``step_limit`` simulator moves
    (scienceworld's and AgentGym's 100; a ``wait`` counts about ten) it is truncated.

    Task ``i`` is AgentGym's ``data_idx`` ``i`` (see :mod:`agenthub_env_sciworld.tasks`).
    A task id fixes the world: the same id gives the same episode in any JVM,
    whatever the seed; the seed only picks a train task when no id is given.

    ``reset(options={"valid_actions": True})`` adds ``info["available_actions"]``
    for that episode; it costs more than the step itself (see the README).

    Instances built with the same JVM settings in one process share a pool of
    JVMs (:mod:`agenthub_env_sciworld.pool`): each holds a slot in a JVM with
    room, and a JVM's calls run one at a time. ``sessions_per_jvm=1`` gives
    every instance a JVM of its own.

    >>> env = SciWorldEnv()  # doctest: +SKIP
    >>> observation, info = env.reset(task_id=0)  # doctest: +SKIP
    >>> info["task_name"], info["variation"]  # doctest: +SKIP
    ('boil', 0)
    """

    def __init__(
        self,
        *,
        heap_mb: int = DEFAULT_HEAP_MB,
        valid_actions: bool = False,
        simplifications: str = "",
        step_limit: int | None = DEFAULT_STEP_LIMIT,
        java: str | None = None,
        jvm_options: Sequence[str] = (),
        sessions_per_jvm: int = DEFAULT_SESSIONS_PER_JVM,
        recycle_after: int = DEFAULT_RECYCLE_AFTER,
        pool: JVMPool | None = None,
    ) -> None:
        """Take a slot in a JVM with room, starting one when none has any.

        Args:
            heap_mb: the JVM's heap cap (``-Xmx``), in MB.
            valid_actions: list ``available_actions`` in every episode unless a reset's options say otherwise.
            simplifications: scienceworld's simplifications for every episode unless a reset's options say
                otherwise, e.g. ``"easy"`` or ``"openDoors,teleportAction"``; AgentGym uses none.
            step_limit: simulator moves after which the episode is truncated; ``None`` for no limit.
            java: the ``java`` executable (default: ``$JAVA_HOME/bin/java``, else ``java`` on ``PATH``).
            jvm_options: further JVM options, appended to the defaults.
            sessions_per_jvm: how many instances one JVM hosts at most; 1 for a JVM per instance.
            recycle_after: resets a JVM serves before its instances move, at their next reset, to a fresh one.
            pool: the ``JVMPool`` to take a slot from, instead of the process's pool for the settings above
                (which it then ignores: the pool has its own).
        """
        if not isinstance(valid_actions, bool):
            raise ValueError(f"valid_actions must be true or false, got {valid_actions!r}")
        bad_limit = isinstance(step_limit, bool) or not isinstance(step_limit, int) or step_limit < 1
        if step_limit is not None and bad_limit:
            raise ValueError(f"step_limit must be a positive integer or None, got {step_limit!r}")
        self.valid_actions = valid_actions
        self.simplifications = check_simplifications(simplifications)
        self.step_limit = step_limit
        self._pool: JVMPool = pool or shared_pool(
            sessions_per_jvm=check_positive("sessions_per_jvm", sessions_per_jvm),
            recycle_after=check_positive("recycle_after", recycle_after),
            heap_mb=heap_mb,
            java=java,
            options=tuple(jvm_options),
        )
        self._slot: JVMSlot = self._pool.acquire()
        self._held = [self._slot]
        """The slot to give back, even when the instance is dropped without ``close()``."""
        self._finalizer = weakref.finalize(self, _give_back, self._pool, self._held)
        self._task: SciWorldTask | None = None
        self._list_actions = False
        self._score = 0
        self._paid = 0
        """The score the rewards so far add up to (times 100)."""
        self._won = False
        self._ended: tuple[bool, bool] | None = None
        """``(terminated, truncated)`` of the step that ended the episode."""
        self._closed = False

    @property
    def jvm(self) -> ScienceWorldJVM:
        """The JVM this instance plays in now (another one after a reset that moved it)."""
        return self._slot.jvm

    @property
    def slot(self) -> JVMSlot:
        return self._slot

    @property
    def pool(self) -> JVMPool:
        return self._pool

    def reset(
        self,
        *,
        task_id: TaskId | None = None,
        seed: int | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> tuple[str, dict[str, Any]]:
        self._check_open()
        start = begin_reset(
            "sciworld",
            task_id=task_id,
            seed=seed,
            options=options,
            train=TRAIN_IDS,
            known_options=RESET_OPTIONS,
            default_seed=DEFAULT_SEED,
        )
        task_id, options = start.task_id, start.options
        list_actions = options.get("valid_actions", self.valid_actions)
        if not isinstance(list_actions, bool):
            raise ValueError(f"options['valid_actions'] must be true or false, got {list_actions!r}")
        if isinstance(task_id, bool) or not isinstance(task_id, int) or not 0 <= task_id < NUM_TASK_IDS:
            raise ValueError(
                f"unknown sciworld task {task_id!r}: task ids are integers from 0 to {NUM_TASK_IDS - 1} "
                f"(AgentGym's data_idx i is task i)"
            )
        task, variation = task_of(task_id)
        simplifications = check_simplifications(options.get("simplifications", self.simplifications), task.name)
        if self._pool.needs_move(self._slot):
            # Its JVM is spent (recycled) or dead: play the next episode in another one.
            old, self._slot = self._slot, self._pool.acquire()
            self._held[0] = self._slot
            self._pool.release(old)
        self._slot.load(task.name, variation, simplifications)
        look = self._slot.call("step", "look around")
        description = self._slot.call("getTaskDescription")
        self._task = task
        self._list_actions = list_actions
        self._score = self._read_score()
        self._paid = 0
        self._won = False
        self._ended = None
        info = self._info()
        info.update(
            task_name=task.name,
            task_num=task.num,
            variation=variation,
            split=None if task.num in AGENTGYM_EXCLUDED else task.split_of(variation),
            simplifications=simplifications,
        )
        return f"{description}\n{look}", info

    def step(self, action: Action) -> StepTuple:
        self._check_open()
        if self._task is None:
            raise RuntimeError("step() called before reset(); reset the environment first")
        if self._ended is not None:
            text = "The episode is over. Reset to play again."
            return text, 0.0, *self._ended, self._info(list_actions=False)
        if not isinstance(action, str):
            text = "ScienceWorld takes text actions such as 'look around' or 'open door to kitchen', not tool calls."
            return text, 0.0, False, False, {**self._info(), "invalid_action": True}
        # The parser matches whole words; runs of whitespace (a newline from a model) would defeat it.
        observation, raw_score, completed, moves = self._slot.run(lambda: self._play(" ".join(action.split())))
        score = round(100 * raw_score)  # scienceworld's own conversion: a 0-1 float to a 0-100 integer
        self._won = completed
        reward = (score - self._paid) / 100
        self._score = self._paid = score
        terminated = self._won or score < 0
        truncated = not terminated and self.step_limit is not None and moves > self.step_limit
        if terminated or truncated:
            self._ended = (terminated, truncated)
        info = self._info()
        info["moves"] = moves
        if observation.startswith(UNKNOWN_ACTION):
            info["invalid_action"] = True
        return observation, reward, terminated, truncated, info

    def close(self) -> None:
        self._closed = True
        self._finalizer()

    # -- helpers ----------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError("this SciWorldEnv is closed and its JVM stopped; create a new one")

    def _play(self, action: str) -> tuple[str, float, bool, int]:
        """One step and what it changed, in one turn of the JVM's lock."""
        server = self._slot.server
        observation = str(server.step(action))
        return observation, float(server.getScore()), bool(server.getCompleted()), int(server.getNumMoves())

    def _read_score(self) -> int:
        # scienceworld's own conversion: a 0-1 float to a 0-100 integer.
        return round(100 * float(self._slot.call("getScore")))

    def _info(self, *, list_actions: bool | None = None) -> dict[str, Any]:
        info: dict[str, Any] = {"score": self._score, "won": self._won}
        if self._list_actions if list_actions is None else list_actions:
            info["available_actions"] = self.available_actions()
        return info

    def available_actions(self) -> list[str]:
        """Every action that is valid now, sorted; one Java call and one string, not a py4j list walk."""
        slot = self._slot

        def joined() -> str:
            actions = slot.server.getValidActionObjectCombinations()
            return str(slot.jvm.gateway.jvm.java.lang.String.join("\n", actions))

        return sorted({action for action in slot.run(joined).split("\n") if action})
