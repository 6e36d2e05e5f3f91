"""Wordle's feedback rule and the shipped word lists."""

from __future__ import annotations

from importlib import resources

import pytest

from agenthub_env_wordle.oracle import OPENER
from agenthub_env_wordle.rules import feedback
from agenthub_env_wordle.solver import best_guess, narrow
from agenthub_env_wordle.tasks import ANSWER_COUNT
from agenthub_env_wordle.words import allowed_guesses, answers, guess_list


@pytest.mark.parametrize(
    ("guess", "answer", "marks"),
    [
        ("crane", "crane", "ggggg"),
        ("panic", "frown", "bbybb"),
        ("lolly", "hello", "byggb"),  # the two l's of "hello" are both green; the first l gets nothing
        ("speed", "abide", "bbyby"),  # one e in the answer: only the first unmatched e is yellow
        ("eerie", "there", "ybybg"),
        ("abbey", "kebab", "yygyb"),  # the green b uses up one of the two b's
    ],
)
def test_feedback_follows_the_repeated_letter_rule(guess: str, answer: str, marks: str) -> None:
    assert feedback(guess, answer) == marks


def test_narrow_keeps_exactly_the_words_consistent_with_feedback() -> None:
    words = ["crane", "crate", "trace", "react", "panic"]
    assert narrow(words, "crane", feedback("crane", "crate")) == ["crate"]
    assert narrow(words, "panic", "bybby") == ["crate", "trace", "react"]  # crane has an n: "byyby"


def test_best_guess_splits_candidates_and_is_deterministic() -> None:
    candidates = ["batch", "catch", "hatch", "latch", "match", "patch", "watch"]
    # Every candidate leaves the others tied; a probe word covering b, c, h, l, m, p, w, ... splits them.
    probe = best_guess(candidates, [*candidates, "clamp", "whelp", "blimp"])
    buckets = {feedback(probe, word) for word in candidates}
    assert probe not in candidates and len(buckets) >= 4
    assert best_guess(candidates, candidates) == best_guess(list(reversed(candidates)), candidates)
    with pytest.raises(ValueError, match="no candidate"):
        best_guess([], candidates)


def test_shipped_lists_are_clean_and_consistent() -> None:
    assert len(answers()) == ANSWER_COUNT == len(set(answers()))
    assert all(len(w) == 5 and w.isascii() and w.isalpha() and w.islower() for w in guess_list())
    assert set(answers()) <= allowed_guesses()
    assert list(guess_list()) == sorted(allowed_guesses())
    assert OPENER in allowed_guesses()
    assert answers() != tuple(sorted(answers()))  # shuffled, so splits are not alphabetical ranges


def test_licence_notice_ships_with_the_lists() -> None:
    data = resources.files("agenthub_env_wordle").joinpath("data")
    notice = data.joinpath("NOTICE").read_text(encoding="utf-8")
    assert "SCOWL" in notice and "SCOWL-COPYRIGHT.txt" in notice
    assert "Permission to use, copy, modify, distribute" in data.joinpath("SCOWL-COPYRIGHT.txt").read_text("utf-8")
