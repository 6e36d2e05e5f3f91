"""``guess``: the built-in number-guessing environment.

Small, deterministic and dependency-free, so that core tests and newcomers
have a real environment to run. The secret of task ``i`` is fixed by ``i``;
the feedback ("too low" / "too high") lets a binary search win every task.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping
from typing import Any

from agenthub.env_reset import begin_reset
from agenthub.protocols import StepTuple
from agenthub.types import Action, TaskId, TaskSplit

TRAIN_TASKS = TaskSplit.range(0, 10_000)
TEST_TASKS = TaskSplit.range(10_000, 10_500)
SPLITS = {"train": TRAIN_TASKS, "test": TEST_TASKS}

# Matched against the stripped reply, so that no two whitespace runs meet: ``\s*[.!]?\s*$`` on the raw
# text tried every split of a long run of spaces, quadratic in its length (16,000 spaces: 1.7 s).
_GUESS = re.compile(r"(?:guess\s*)?(-?\d+)\s*[.!]?", re.IGNORECASE)


MAX_DIGITS = 18
"""A longer number is not read: ``int()`` of a digit run takes time quadratic in its length, and
CPython refuses runs over 4,300 digits with a ValueError (a crash of the step, not an answer)."""


def parse_guess(action: Action) -> int | None:
    """The number in ``guess N`` (or ``N``), optionally ending in ``.``/``!``; None for anything else,
    a number of more than ``MAX_DIGITS`` digits included.

    Linear in the length of the reply: the pattern runs once, anchored, on the stripped text.
    """
    match = _GUESS.fullmatch(action.strip()) if isinstance(action, str) else None
    if match is None or len(match.group(1).lstrip("-")) > MAX_DIGITS:
        return None
    return int(match.group(1))


class GuessNumberEnv:
    """Find a secret whole number from 1 to ``high`` with higher/lower feedback.

    Reward is 1.0 on the turn the number is found and 0 otherwise. After
    ``max_guesses`` wrong guesses the episode ends as lost. An unparsable
    action costs nothing and is answered with the expected format.
    """

    def __init__(self, high: int = 16, max_guesses: int = 8) -> None:
        if high < 2:
            raise ValueError(f"high must be at least 2, got {high}")
        if max_guesses < 1:
            raise ValueError(f"max_guesses must be at least 1, got {max_guesses}")
        self.high = high
        self.max_guesses = max_guesses
        self._actions = [f"guess {n}" for n in range(1, high + 1)]
        self._secret: int | None = None
        self._guesses = 0
        self._done = False

    def reset(
        self,
        *,
        task_id: TaskId | None = None,
        seed: int | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> tuple[str, dict[str, Any]]:
        task_id = begin_reset("guess", task_id=task_id, seed=seed, options=options, train=TRAIN_TASKS).task_id
        if not isinstance(task_id, int) or task_id < 0:
            raise ValueError(f"guess task ids are non-negative integers, got {task_id!r}")
        # The secret depends on the task id only, so every seed of a task is the same game.
        self._secret = random.Random(task_id).randint(1, self.high)
        self._guesses = 0
        self._done = False
        text = (
            f"I am thinking of a whole number from 1 to {self.high}. "
            f"You have {self.max_guesses} guesses. Reply with: guess <number>"
        )
        return text, self._info()

    def step(self, action: Action) -> StepTuple:
        if self._secret is None:
            raise RuntimeError("step() called before reset()")
        if self._done:
            return "The game is over. Reset to play again.", 0.0, True, False, self._info()
        number = parse_guess(action)
        if number is None:
            text = (
                f"I did not understand {_clip(action)!r}. "
                f"Reply with: guess <number>, a whole number from 1 to {self.high}."
            )
            return text, 0.0, False, False, {**self._info(), "invalid_action": True}
        if not 1 <= number <= self.high:
            text = f"{number} is outside the range. Guess a whole number from 1 to {self.high}."
            return text, 0.0, False, False, {**self._info(), "invalid_action": True}
        self._guesses += 1
        if number == self._secret:
            self._done = True
            plural = "guess" if self._guesses == 1 else "guesses"
            text = f"Correct! The number was {number}. You found it in {self._guesses} {plural}."
            return text, 1.0, True, False, {**self._info(), "won": True, "score": 1.0}
        if self._guesses >= self.max_guesses:
            self._done = True
            text = f"{number} is wrong and you are out of guesses. The number was {self._secret}."
            return text, 0.0, True, False, {**self._info(), "won": False, "score": 0.0}
        direction = "too low" if number < self._secret else "too high"
        left = self.max_guesses - self._guesses
        return f"{number} is {direction}. {left} guesses left.", 0.0, False, False, self._info()

    def close(self) -> None:
        self._secret = None

    def _info(self) -> dict[str, Any]:
        return {"available_actions": list(self._actions), "guesses": self._guesses}


def _clip(action: Action, limit: int = 60) -> str:
    text = action if isinstance(action, str) else f"{action.name}({action.arguments})"
    return text if len(text) <= limit else text[: limit - 3] + "..."
