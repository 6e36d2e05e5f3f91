"""The anagram environment: unscramble a word.

Made with ``agenthub init env anagram`` and then rewritten, the way an outside author
would: the words ship inside the package (``words.txt``, written for this example),
the scramble of task ``i`` is fixed by ``i``, and four candidate answers are offered
so that baselines such as the random agent can play.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from functools import cache
from importlib.resources import files
from typing import Any

from agenthub import Action, StepTuple, TaskId, TaskSplit

SPLITS = {"train": TaskSplit.range(0, 2000), "test": TaskSplit.range(2000, 2200)}
ATTEMPTS = 2
CHOICES = 4


@cache
def words() -> tuple[str, ...]:
    text = files("agenthub_env_anagram").joinpath("words.txt").read_text(encoding="utf-8")
    return tuple(sorted({w.strip().lower() for w in text.split() if w.strip().isalpha()}))


def scramble(word: str, rng: random.Random) -> str:
    """A permutation of ``word`` that is not the word itself (every listed word has 2+ distinct letters)."""
    letters = list(word)
    while "".join(letters) == word:
        rng.shuffle(letters)
    return "".join(letters)


class AnagramEnv:
    """Unscramble the task's word; ``ATTEMPTS`` answers per episode."""

    def __init__(self, attempts: int = ATTEMPTS) -> None:
        if attempts < 1:
            raise ValueError(f"attempts must be at least 1, got {attempts}")
        self.attempts = attempts
        self._word: str | None = None
        self._scrambled = ""
        self._choices: list[str] = []
        self._answers = 0
        self._done = False

    def reset(
        self,
        *,
        task_id: TaskId | None = None,
        seed: int | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> tuple[str, dict[str, Any]]:
        if options:
            raise ValueError(f"anagram takes no reset options, got {sorted(options)}")
        if task_id is None:
            task_id = random.Random(seed).randrange(SPLITS["train"].count)
        if not isinstance(task_id, int) or task_id < 0:
            raise ValueError(f"anagram task ids are non-negative integers, got {task_id!r}")
        rng = random.Random(task_id)  # the task's own RNG: the same id is always the same puzzle
        vocabulary = words()
        self._word = vocabulary[task_id % len(vocabulary)]
        self._scrambled = scramble(self._word, rng)
        others = rng.sample([w for w in vocabulary if w != self._word], CHOICES - 1)
        self._choices = sorted([self._word, *others])
        self._answers = 0
        self._done = False
        return f"Unscramble the letters into an English word: {self._scrambled}", self._info()

    def step(self, action: Action) -> StepTuple:
        if self._word is None:
            raise RuntimeError("step() called before reset()")
        if self._done:
            return "The episode is over. Reset to play again.", 0.0, True, False, self._info()
        answer = action.strip().strip(".").lower() if isinstance(action, str) else ""
        if not answer.isalpha():
            text = f"Reply with one word made of the letters {self._scrambled!r}."
            return text, 0.0, False, False, {**self._info(), "invalid_action": True}
        if sorted(answer) != sorted(self._word):
            text = f"{answer!r} does not use exactly the letters {self._scrambled!r}; try again."
            return text, 0.0, False, False, {**self._info(), "invalid_action": True}
        self._answers += 1
        if answer == self._word:
            self._done = True
            return f"Correct: {self._word}.", 1.0, True, False, {**self._info(), "won": True}
        if self._answers >= self.attempts:
            self._done = True
            return f"{answer!r} is not it; the word was {self._word}.", 0.0, True, False, {**self._info(), "won": False}
        left = self.attempts - self._answers
        return f"{answer!r} is not the word. {left} answer left.", 0.0, False, False, self._info()

    def close(self) -> None:
        self._word = None

    def _info(self) -> dict[str, Any]:
        return {"available_actions": list(self._choices), "answers": self._answers}
