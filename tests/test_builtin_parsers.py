"""The built-in envs' action parsers: linear-time rewrites that read every reply as the patterns before them did.

The oracle is the envs' own patterns before issue 27 (commit 5fdeab0), run on a generated corpus
of short replies, where their quadratic backtracking costs nothing.
"""

from __future__ import annotations

import random
import re

import pytest

from agenthub.builtin.guess import MAX_DIGITS, GuessNumberEnv, parse_guess
from agenthub.builtin.tictactoe import TicTacToeEnv, parse_move
from agenthub.builtin.trail import parse_direction
from agenthub.testing import MEGABYTE_PARSE_CPU_S, cpu_seconds_at_most
from agenthub.testing.hostile_text import hostile_actions

GUESS_BEFORE = re.compile(r"^\s*(?:guess\s*)?(-?\d+)\s*[.!]?\s*$", re.IGNORECASE)
MOVE_BEFORE = re.compile(r"^\s*(?:place\s*)?([1-9])\s*[.!]?\s*$", re.IGNORECASE)
PIECES = ["guess", "GUESS", "place", "Place", "gue\u017fs", "pla\u212ae", "5", "13", "0", "-", "9", ".", "!", "x",
          " ", "  ", "\t", "\n", "\r\n", "\u00a0", "\u3000", "\u2028", "\x1c", "\u0665", "\u00b2"]  # fmt: skip
"""Words, digits (Arabic-Indic five, superscript two), punctuation and whitespace (Unicode and the C0
separators that ``str.isspace`` counts), glued at random."""


def corpus(seed: int, count: int = 20_000) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(PIECES) for _ in range(rng.randint(0, 6))) for _ in range(count)]


def guess_before(reply: str) -> int | None:
    match = GUESS_BEFORE.match(reply)
    return int(match.group(1)) if match else None


def move_before(reply: str) -> int | None:
    match = MOVE_BEFORE.match(reply)
    return int(match.group(1)) if match else None


@pytest.mark.parametrize("seed", [0, 1])
def test_guess_and_tictactoe_read_every_reply_as_their_patterns_before_them(seed: int) -> None:
    replies = corpus(seed)
    assert [parse_guess(r) for r in replies] == [guess_before(r) for r in replies]
    assert [parse_move(r) for r in replies] == [move_before(r) for r in replies]
    assert sum(guess_before(r) is not None for r in replies) > 500  # the corpus reaches the matching branch


def test_a_guess_of_thousands_of_digits_is_answered_not_raised() -> None:
    env = GuessNumberEnv()
    env.reset(task_id=0)
    # CPython refuses int() of over 4,300 digits with a ValueError: the pattern before crashed the step.
    observation, reward, terminated, _, info = env.step("guess " + "9" * 5000)
    assert info["invalid_action"] is True and (reward, terminated) == (0.0, False)
    assert "I did not understand 'guess 9999" in observation
    assert parse_guess("guess " + "1" * MAX_DIGITS) == int("1" * MAX_DIGITS)
    assert parse_guess("guess " + "1" * (MAX_DIGITS + 1)) is None


def test_each_built_in_parser_reads_a_megabyte_of_hostile_text_promptly() -> None:
    tictactoe = TicTacToeEnv()
    tictactoe.reset()
    for shape, action in hostile_actions(1_000_000).items():
        with cpu_seconds_at_most(MEGABYTE_PARSE_CPU_S, shape):  # linear: milliseconds; quadratic: hours
            assert parse_guess(action) is None and parse_move(action) is None
            direction = parse_direction(action)
            tictactoe.step(0, action)
        assert direction in (None, "left", "right")
