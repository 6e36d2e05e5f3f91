"""Wordle's feedback rule, shared by the environment and the oracle."""

from __future__ import annotations

WORD_LENGTH = 5
MAX_GUESSES = 6  # LMRL-Gym's N_TRIES


def feedback(guess: str, answer: str) -> str:
    """One letter per position: ``g`` right letter and place, ``y`` in the word elsewhere, ``b`` not in it.

    Repeated letters follow the game's published rule: greens first, then yellows
    from left to right while the answer still has that letter unmatched.

    >>> feedback("speed", "abide")
    'bbybg'
    """
    marks = ["b"] * WORD_LENGTH
    unmatched: dict[str, int] = {}
    for i, (g, a) in enumerate(zip(guess, answer, strict=True)):
        if g == a:
            marks[i] = "g"
        else:
            unmatched[a] = unmatched.get(a, 0) + 1
    for i, g in enumerate(guess):
        if marks[i] == "b" and unmatched.get(g, 0) > 0:
            marks[i] = "y"
            unmatched[g] -= 1
    return "".join(marks)
