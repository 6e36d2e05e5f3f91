"""``wordle``: LMRL-Gym's Wordle, as AgentGym serves it.

Guess a hidden five-letter word in six tries. Each guess is answered with one
letter per position, space separated as in AgentGym: ``g`` (right letter, right
place), ``y`` (in the word, elsewhere) or ``b`` (not in the word).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from agenthub import Action, begin_reset

from agenthub_env_wordle.rules import MAX_GUESSES, WORD_LENGTH, feedback
from agenthub_env_wordle.tasks import TRAIN, check_task_id
from agenthub_env_wordle.words import allowed_guesses, answers

StepTuple = tuple[str, float, bool, bool, dict[str, Any]]

# AgentGym's prompt asks for "Thought: ...\n\nAction:\n<word>"; take what follows the last "Action:".
_ACTION_LABEL = re.compile(r"action\s*:", re.IGNORECASE)

INTRO = (
    "Let's play Wordle. Guess the hidden {n}-letter English word in at most {tries} guesses. "
    'Write a guess as its letters separated by spaces, like "s h i r e" ("shire" works too). '
    "Each guess is answered with {n} letters separated by spaces, one per position of your guess:\n"
    '"g" means that letter is in the hidden word at that position,\n'
    '"y" means that letter is in the hidden word but at another position,\n'
    '"b" means that letter is not in the hidden word.\n'
    'For example "b y g g b" after "p a n i c". A guess that is not a {n}-letter word in the game\'s '
    'vocabulary is answered with "invalid word" and still uses up a guess.\n\n'
    "Let's start Wordle!"
)


def parse_guess(action: Action) -> str:
    """The guessed word, lower-cased: "s h i r e", "SHIRE." and "Thought: ... Action: s h i r e" give "shire"."""
    if not isinstance(action, str):
        return ""
    text = _ACTION_LABEL.split(action)[-1].strip().strip(".!\"'`").strip().lower()
    letters = text.split()
    if len(letters) > 1 and all(len(letter) == 1 for letter in letters):
        return "".join(letters)
    return text


class WordleEnv:
    """Find a secret word with letter-by-letter feedback.

    Reward is 1.0 on the guess that finds the word and 0 otherwise. The episode
    ends when the word is found or after ``max_guesses`` guesses. A guess that is
    not a word of the vocabulary is answered "invalid word" and counts as a guess,
    as in LMRL-Gym.
    """

    def __init__(self, max_guesses: int = MAX_GUESSES) -> None:
        if max_guesses < 1:
            raise ValueError(f"max_guesses must be at least 1, got {max_guesses}")
        self.max_guesses = max_guesses
        self._answer: str | None = None
        self._guesses = 0
        self._done = False

    def reset(
        self,
        *,
        task_id: int | str | None = None,
        seed: int | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> tuple[str, dict[str, Any]]:
        # The secret depends on the task id alone; the seed only picks a task when none is named.
        start = begin_reset("wordle", task_id=task_id, seed=seed, options=options, train=TRAIN)
        index = check_task_id(start.task_id)
        self._answer = answers()[index]
        self._guesses = 0
        self._done = False
        return INTRO.format(n=WORD_LENGTH, tries=self.max_guesses), self._info()

    def step(self, action: Action) -> StepTuple:
        if self._answer is None:
            raise RuntimeError("step() called before reset()")
        if self._done:
            return "The game is over. Reset to play again.", 0.0, True, False, self._info()
        guess = parse_guess(action)
        self._guesses += 1
        left = self.max_guesses - self._guesses
        plural = "guess" if left == 1 else "guesses"
        if guess not in allowed_guesses():
            shown = _clip(guess or str(action))
            text = f"invalid word: {shown!r} is not a {WORD_LENGTH}-letter word in the vocabulary."
            info: dict[str, Any] = {**self._info(), "invalid_action": True}
        else:
            marks = feedback(guess, self._answer)
            text, info = " ".join(marks), self._info()
            if guess == self._answer:
                self._done = True
                text += f"\nYou found the word {guess!r} in {self._guesses} of {self.max_guesses} guesses."
                return text, 1.0, True, False, {**self._info(), "won": True, "score": 1.0}
        if left == 0:
            self._done = True
            text += f"\nYou are out of guesses. The word was {self._answer!r}."
            return text, 0.0, True, False, {**info, "won": False, "score": 0.0}
        if "invalid_action" in info:
            text += f" It still uses up a guess; {left} {plural} left."
        return text, 0.0, False, False, info

    def close(self) -> None:
        self._answer = None

    def _info(self) -> dict[str, Any]:
        return {"guesses": self._guesses, "guesses_left": self.max_guesses - self._guesses}


def _clip(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
