"""``babyai``: minigrid's BabyAI levels as a text environment, compatible with AgentGym.

Task ``i`` is level ``i % 40 + 1`` of :data:`~agenthub_env_babyai.levels.LEVELS`
with minigrid seed ``i // 40``. Observations and actions are AgentGym's (see
:mod:`.describe` and :mod:`.actions`). The reward is minigrid's on the step that
completes the mission, ``1 - 0.9 * steps / max_steps`` counted in primitive
steps, and 0 otherwise; ``info["won"]`` says whether the mission was completed.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import gymnasium
import minigrid  # noqa: F401  (registers the BabyAI-* ids with gymnasium)
import numpy as np
from agenthub import Action, StepTuple, TaskId, begin_reset
from minigrid.envs.babyai.core import roomgrid_level

from agenthub_env_babyai.actions import CHECK_ACTIONS, ActionSet, plan_actions
from agenthub_env_babyai.describe import describe, scan_view
from agenthub_env_babyai.levels import TRAIN_TASKS, Level, level_of

log = logging.getLogger(__name__)


def _log_rejected_sample(*args: object, **_: object) -> None:
    log.debug(" ".join(str(a) for a in args))


# The level generator reports rejected samples with a bare print() in this one module.
# contextlib.redirect_stdout would swap sys.stdout for the whole process, so a reset in
# one thread would swallow (or leak) another thread's output. A module-level ``print``
# shadows the builtin for that module's code only: thread-safe, and nothing else changes.
roomgrid_level.print = _log_rejected_sample  # type: ignore[attr-defined]

_UNRECOGNISED = "The action is not recognized. Please check valid actions."
_NO_CHANGE = "No change in state."
_COMPLETED = "\n The task is completed."


@dataclass(frozen=True)
class MacroResult:
    reward: float
    terminated: bool
    truncated: bool
    primitives: int
    """How many primitives ran; a macro stops at the first that changes nothing."""


def make_level(level: Level) -> Any:
    """A fresh, reset minigrid env (unwrapped) for ``level``."""
    env = gymnasium.make(level.name, disable_env_checker=True).unwrapped
    env.reset(seed=level.seed)
    return env


def run_macro(env: Any, primitives: tuple[int, ...]) -> MacroResult:
    """Step ``env`` through ``primitives`` as AgentGym does: stop early when one changes
    nothing in the agent's view. Also stop when the episode ends, so that a mission
    completed mid-macro is not undone by the moves after it."""
    before = env.gen_obs()["image"]
    reward, terminated, truncated, ran = 0.0, False, False, 0
    for primitive in primitives:
        obs, reward, terminated, truncated, _ = env.step(primitive)
        ran += 1
        if terminated or truncated:
            break
        after = obs["image"]
        if np.array_equal(after, before):
            break
        before = after
    return MacroResult(float(reward), bool(terminated), bool(truncated), ran)


def goal_text(mission: str) -> str:
    # AgentGym rewrites the connectives of sequence missions; kept for comparable prompts.
    return mission.replace("then", "and").replace("after you", "and")


def with_actions(text: str, names: list[str]) -> str:
    """Append the action list the way AgentGym's server does."""
    return f"{text}\nAvailable actions: [{', '.join(json.dumps(n) for n in names)}]"


class BabyAIEnv:
    """One BabyAI game at a time, driven by AgentGym's text actions.

    An action is matched after lower-casing and trimming it; "pick up ..." is read
    as "pickup ..." (AgentGym's own prompt spells it with a space). Unknown or
    currently impossible actions are answered with AgentGym's message and change
    nothing but the turn count.
    """

    def __init__(self) -> None:
        self._env: Any = None
        self._level_name: str | None = None
        self._level: Level | None = None
        self._actions = ActionSet()
        self._description = ""
        self._done = False
        self._won = False
        self._steps = 0

    # -- protocol ----------------------------------------------------------------

    def reset(
        self,
        *,
        task_id: TaskId | None = None,
        seed: int | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> tuple[str, dict[str, Any]]:
        """Start task ``task_id``; without one, ``seed`` picks a training task.

        The task id alone fixes the game (AgentGym's level and seed), so every
        ``seed`` of a given task id plays the same game.
        """
        start = begin_reset(
            "babyai", task_id=task_id, seed=seed, options=options, train=TRAIN_TASKS, hint="pass task_id instead"
        )
        level = level_of(start.task_id)
        if level.name == self._level_name and self._env is not None:
            self._env.reset(seed=level.seed)  # a reseeded reset regenerates the level exactly
        else:
            self._env = make_level(level)
            self._level_name = level.name
        self._level = level
        self._done = self._won = False
        self._steps = 0
        self._observe()
        text = with_actions(f"Your goal: {self.goal}\n{self._description}", self._actions.names)
        return text, self._info()

    def step(self, action: Action) -> StepTuple:
        if self._env is None:
            raise RuntimeError("step() called before reset(); call reset(task_id=...) first")
        if self._done:
            text = "The episode is over. Reset to play again."
            return text, 0.0, True, False, self._info(action_is_valid=False)
        name = _normalise(action)
        if CHECK_ACTIONS in name or "check" in name:
            text = "You can take the following actions: " + ", ".join(self._actions.names)
            return with_actions(text, self._actions.names), 0.0, False, False, self._info(action_is_valid=True)
        primitives = self._actions.macros.get(name)
        if primitives is None:
            message = self._actions.refusals.get(name, _NO_CHANGE if name == "" else _UNRECOGNISED)
            return with_actions(message, self._actions.names), 0.0, False, False, self._info(action_is_valid=False)
        if not primitives:
            return with_actions(_NO_CHANGE, self._actions.names), 0.0, False, False, self._info(action_is_valid=True)
        result = run_macro(self._env, primitives)
        self._steps += result.primitives
        self._won = result.terminated and result.reward > 0
        self._done = result.terminated or result.truncated
        self._observe()
        text = self._description + (_COMPLETED if result.terminated else "")
        reward = result.reward if self._won else 0.0
        info = self._info(action_is_valid=True)
        if self._done:
            info.update(won=self._won, score=reward)
        return with_actions(text, self._actions.names), reward, result.terminated, result.truncated, info

    def close(self) -> None:
        if self._env is not None:
            self._env.close()
        self._env = None
        self._level_name = None

    # -- for the oracle and tests ------------------------------------------------------

    @property
    def goal(self) -> str:
        return goal_text(str(self._env.mission))

    @property
    def available_actions(self) -> list[str]:
        return self._actions.names

    @property
    def macros(self) -> dict[str, tuple[int, ...]]:
        """Action text -> minigrid primitives, for the current state."""
        return dict(self._actions.macros)

    @property
    def minigrid_env(self) -> Any:
        """The underlying minigrid env (unwrapped); read it, do not step it."""
        return self._env

    # -- internals ---------------------------------------------------------------------

    def _observe(self) -> None:
        view = scan_view(self._env)
        self._description = describe(view)
        self._actions = plan_actions(view)

    def _info(self, **extra: Any) -> dict[str, Any]:
        assert self._level is not None
        return {
            "available_actions": self._actions.names,
            "goal": self.goal,
            "level": self._level.name,
            "level_number": self._level.number,
            "level_seed": self._level.seed,
            "primitive_steps": self._steps,
            **extra,
        }


def _normalise(action: Action) -> str:
    if not isinstance(action, str):
        return f"{action.name}".lower().strip()  # a tool call: only its name can be an action
    name = " ".join(action.lower().split())
    if name.startswith("pick up "):
        name = "pickup " + name[len("pick up ") :]
    return name
