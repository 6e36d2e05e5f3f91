"""``trail``: the built-in multi-turn environment a tiny model learns on a CPU in minutes.

A trail has a few forks (3 by default, one turn each). At each fork a sign
points left or right; the way the sign points leads on, the other way ends in
a dead end. The signs of task ``i`` are fixed by ``i``, so the agent has to
read each observation to win: no fixed reply does better than 1 in 8.

It exists for a CPU trainer's first run (``agenthub run trainer=NAME env=trail``). A reply is read
leniently (the word ``left``/``right``, else its first letter ``l`` or ``r``),
so a random model often makes a move, and wins a few episodes in a hundred;
a policy that follows the signs wins all of them. Reward is ``1 / forks``
per fork passed, so partial progress is visible to the trainer.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping
from typing import Any

from agenthub.env_reset import begin_reset
from agenthub.errors import AgenthubError
from agenthub.protocols import StepTuple
from agenthub.types import Action, AgentReply, EnvInfo, Observation, Task, TaskId, TaskSplit

TRAIN_TASKS = TaskSplit.range(0, 10_000)
TEST_TASKS = TaskSplit.range(10_000, 10_500)
SPLITS = {"train": TRAIN_TASKS, "test": TEST_TASKS}
DIRECTIONS = ("left", "right")

INSTRUCTIONS = "Follow the signs on the trail. At each fork reply with one word: left or right."
MAX_ACTION_CHARS = 65_536
"""A reply is read anywhere in its text, so a model's long reasoning before ``left`` is a move: twice the default."""

# The whole word if there is one; else the first l or r decides, so that any reply is a move.
_WORD = re.compile(r"\b(left|right)\b", re.IGNORECASE)
_LETTER = re.compile(r"[lr]", re.IGNORECASE)
_SIGN = re.compile(r"sign points (left|right)")


def parse_direction(action: Action) -> str | None:
    """``"left"``, ``"right"`` or None: the word ``left``/``right``, else the first letter ``l``/``r``."""
    if not isinstance(action, str):
        return None
    if word := _WORD.search(action):
        return word.group(1).lower()
    if letter := _LETTER.search(action):
        return "left" if letter.group(0).lower() == "l" else "right"
    return None


class TrailEnv:
    """Follow the signs past ``forks`` forks; a wrong turn ends the episode as lost.

    A reply with neither ``left``/``right`` nor a letter ``l``/``r`` is not a
    move: the env says so and the agent stays at the fork (the turn is spent).
    """

    def __init__(self, forks: int = 3) -> None:
        if not 1 <= forks <= 20:
            raise ValueError(f"forks must be from 1 to 20, got {forks}")
        self.forks = forks
        self._signs: list[str] | None = None
        self._fork = 0
        self._done = False

    def reset(
        self,
        *,
        task_id: TaskId | None = None,
        seed: int | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> tuple[str, dict[str, Any]]:
        task_id = begin_reset("trail", task_id=task_id, seed=seed, options=options, train=TRAIN_TASKS).task_id
        if not isinstance(task_id, int) or task_id < 0:
            raise ValueError(f"trail task ids are non-negative integers, got {task_id!r}")
        rng = random.Random(f"trail:{task_id}")  # the signs depend on the task id only
        self._signs = [rng.choice(DIRECTIONS) for _ in range(self.forks)]
        self._fork = 0
        self._done = False
        return self._at_fork(), self._info()

    def step(self, action: Action) -> StepTuple:
        if self._signs is None:
            raise RuntimeError("step() called before reset()")
        if self._done:
            return "The walk is over. Reset to walk again.", 0.0, True, False, self._info()
        direction = parse_direction(action)
        if direction is None:
            text = f"That is not a direction. {self._at_fork()}"
            return text, 0.0, False, False, {**self._info(), "invalid_action": True}
        if direction != self._signs[self._fork]:
            self._done = True
            return f"You went {direction} into a dead end.", 0.0, True, False, {**self._info(), "won": False}
        self._fork += 1
        reward = 1.0 / self.forks
        if self._fork == self.forks:
            self._done = True
            return "You reached the end of the trail!", reward, True, False, {**self._info(), "won": True}
        return f"Good. {self._at_fork()}", reward, False, False, self._info()

    def close(self) -> None:
        self._signs = None

    def _at_fork(self) -> str:
        # The sign comes last, right before the model's turn: short observations keep it easy to find.
        assert self._signs is not None
        return f"Fork {self._fork + 1} of {self.forks}: the sign points {self._signs[self._fork]}."

    def _info(self) -> dict[str, Any]:
        return {"available_actions": list(DIRECTIONS), "fork": self._fork}


class TrailOracleEpisode:
    async def act(self, observation: Observation) -> AgentReply:
        sign = _SIGN.search(observation.text)
        if sign is None:
            raise AgenthubError(f"the trail oracle found no sign in {observation.text!r}")
        return AgentReply(action=sign.group(1), text=sign.group(1))


class TrailOracle:
    """Follows every sign, so it wins every ``trail`` task."""

    def start_episode(self, task: Task, env: EnvInfo) -> TrailOracleEpisode:
        if env.name != "trail":
            raise AgenthubError(f"the trail oracle only plays env 'trail', not {env.name!r}")
        return TrailOracleEpisode()
