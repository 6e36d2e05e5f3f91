"""``sciworld-oracle``: plays scienceworld's gold action sequence for the episode's task.

scienceworld computes a gold path when a task is loaded with
``generateGoldPath=True``. The path it computes depends on what the JVM did
before: measured on freeze variation 19, one JVM gave 105 actions fresh, 99
after a dozen other gold paths and 81 after another two dozen. So the oracle
computes every path in a fresh JVM of its own (the worlds themselves do not
depend on history; a test checks that), replays it there from the
environment's own start (a plain load and ``look around``), drops the actions
the simulator refuses (some paths ``connect`` wires to a block that has no
terminals) and stops at the action that completes the task. The result is
the same in every process, and is cached per task.
"""

from __future__ import annotations

import asyncio
import threading
from collections import OrderedDict

from py4j.protocol import Py4JError

from agenthub import AgenthubError, AgentReply, EnvInfo, Observation, Task

from .env import UNKNOWN_ACTION, check_simplifications
from .jvm import JVMError, ScienceWorldJVM
from .tasks import NUM_TASK_IDS, task_of

ORACLE_HEAP_MB = 512
"""Generating the longest gold paths needs 192 MB of heap; this leaves room."""

_CACHED_PATHS = 1024


class SciWorldOracle:
    """Wins every task whose gold path fits the turn limit; see ``README.md`` for measured rates.

    A path costs a JVM start (1-3 s) plus its generation (0.1-16 s), in a
    worker thread; episodes played at the same time compute theirs in
    parallel, each in its own JVM, which exits as soon as the path is known.
    """

    def __init__(self, *, heap_mb: int = ORACLE_HEAP_MB, java: str | None = None) -> None:
        self.heap_mb = heap_mb
        self.java = java
        self._lock = threading.Lock()
        self._paths: OrderedDict[tuple[int, str], tuple[str, ...]] = OrderedDict()

    def start_episode(self, task: Task, env: EnvInfo) -> SciWorldOracleEpisode:
        if env.name != "sciworld":
            raise AgenthubError(f"the sciworld oracle only plays env 'sciworld', not {env.name!r}")
        task_id = task.task_id
        if isinstance(task_id, bool) or not isinstance(task_id, int) or not 0 <= task_id < NUM_TASK_IDS:
            raise AgenthubError(
                f"the sciworld oracle needs the episode's task id, an integer from 0 to {NUM_TASK_IDS - 1}; "
                f"got {task_id!r} (play_episode passes the id the server chose)"
            )
        try:
            simplifications = check_simplifications(task.options.get("simplifications", ""), task_of(task_id)[0].name)
        except ValueError as exc:
            raise AgenthubError(f"the sciworld oracle cannot play this task: {exc}") from None
        return SciWorldOracleEpisode(self, task_id, simplifications)

    def gold_path(self, task_id: int, simplifications: str = "") -> tuple[str, ...]:
        """The actions the oracle plays for a task id; blocks while a JVM computes them."""
        key = (task_id, simplifications)
        with self._lock:
            if key in self._paths:
                self._paths.move_to_end(key)
                return self._paths[key]
        path = self._compute(task_id, simplifications)
        with self._lock:
            self._paths[key] = path
            while len(self._paths) > _CACHED_PATHS:
                self._paths.popitem(last=False)
        return path

    def _compute(self, task_id: int, simplifications: str) -> tuple[str, ...]:
        task, variation = task_of(task_id)
        try:
            jvm = ScienceWorldJVM(heap_mb=self.heap_mb, java=self.java)
        except JVMError as exc:
            raise AgenthubError(f"the sciworld oracle could not start its JVM: {exc}") from None
        try:
            server = jvm.server
            server.load(task.name, variation, simplifications, True)
            gold = [str(action) for action in server.getGoldActionSequence()]
            server.load(task.name, variation, simplifications, False)
            server.step("look around")
            played = []
            for action in gold:
                if str(server.step(action)).startswith(UNKNOWN_ACTION):
                    continue
                played.append(action)
                if server.getCompleted():
                    return tuple(played)
            return tuple(gold)  # scienceworld's path never completes this task; play it as it is
        except Py4JError as exc:
            reason = jvm.describe_failure(exc)
            raise AgenthubError(f"the sciworld oracle could not compute the gold path: {reason}") from None
        finally:
            jvm.close()


class SciWorldOracleEpisode:
    """Replays the gold path one action per turn."""

    def __init__(self, oracle: SciWorldOracle, task_id: int, simplifications: str) -> None:
        self._oracle = oracle
        self._task_id = task_id
        self._simplifications = simplifications
        self._path: tuple[str, ...] | None = None
        self._next = 0

    async def act(self, observation: Observation) -> AgentReply:
        if self._path is None:
            self._path = await asyncio.to_thread(self._oracle.gold_path, self._task_id, self._simplifications)
        elif observation.text.startswith(UNKNOWN_ACTION):
            raise AgenthubError(
                f"sciworld refused the oracle's action {self._path[self._next - 1]!r} "
                f"(task {self._task_id}): {observation.text!r}"
            )
        if self._next >= len(self._path):
            raise AgenthubError(
                f"the gold path of task {self._task_id} ({len(self._path)} actions) is spent but the task is "
                "not complete; the world differs from the one the path was computed for"
            )
        action = self._path[self._next]
        self._next += 1
        return AgentReply(action=action, text=action)
