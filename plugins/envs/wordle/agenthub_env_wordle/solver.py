"""Narrowing the candidate answers from feedback, and choosing the next guess."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from agenthub_env_wordle.rules import feedback


def narrow(candidates: Sequence[str], guess: str, marks: str) -> list[str]:
    """The candidates that would have given ``marks`` for ``guess``."""
    return [word for word in candidates if feedback(guess, word) == marks]


def best_guess(candidates: Sequence[str], pool: Sequence[str]) -> str:
    """The guess from ``pool`` that leaves the fewest candidates on average.

    The score is the sum of squared feedback-bucket sizes, the expected number of
    candidates left times their count. Ties go to a word that may be the answer, then
    to the alphabetically first, so that the choice is deterministic.
    """
    if not candidates:
        raise ValueError("no candidate answers are left; the feedback contradicts the word list")
    if len(candidates) <= 2:
        return min(candidates)
    possible = set(candidates)
    best: tuple[int, bool, str] | None = None
    for guess in pool:
        buckets = Counter(feedback(guess, word) for word in candidates)
        key = (sum(n * n for n in buckets.values()), guess not in possible, guess)
        if best is None or key < best:
            best = key
    assert best is not None, "best_guess needs a non-empty pool"
    return best[2]
