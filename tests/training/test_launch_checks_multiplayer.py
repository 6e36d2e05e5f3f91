"""Checks before launch on a multi-player env: the oracle on every seat, actions measured seat by seat (issue 20)."""

from __future__ import annotations

from typing import Any

import pytest

from agenthub import LocalServer
from agenthub.training import LaunchRefused, TokenLimits, check_launch


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from transformers import AutoTokenizer

    from agenthub.testing.tiny_model import build_tiny_model

    return AutoTokenizer.from_pretrained(build_tiny_model(tmp_path_factory.mktemp("tiny")))


def test_tictactoe_passes_with_room_for_its_moves_and_plays_every_seat(tokenizer: Any) -> None:
    longest = len(tokenizer.encode("place 9", add_special_tokens=False))
    report = check_launch("tictactoe", tokenizer, TokenLimits(max_tokens=longest, max_context=1024))
    assert report.findings == []
    assert report.played_with == "the oracle 'tictactoe-oracle' on all 2 seats" and report.multi_player
    assert report.oracle_outcome == "X draw, O draw" and report.cut_outcome == "X draw, O draw"
    assert report.action_tokens == longest and report.oracle_turns == 9  # the game's steps, both seats
    assert "a seat's side of a finished game" in report.summary() and "checks before launch passed" in report.summary()


def test_a_cut_move_is_refused_with_the_seats_that_no_longer_finish(tokenizer: Any) -> None:
    longest = len(tokenizer.encode("place 9", add_special_tokens=False))
    with LocalServer("tictactoe") as server:
        report = check_launch("tictactoe", tokenizer, TokenLimits(max_tokens=longest - 1), urls=[server.url])
    [problem] = report.problems
    assert problem.key == "max_tokens" and f"Set max_tokens>={longest}" in problem.message
    assert "seat 0 (X) ends truncated with return 0 instead of draw with 0" in problem.message
    assert "seat 1 (O) ends truncated" in problem.message
    with pytest.raises(LaunchRefused, match=r"env 'tictactoe'.*on all 2 seats\):\n  - max_tokens: max_tokens="):
        report.raise_if_refused()


def test_a_seats_side_longer_than_the_context_and_a_short_horizon_are_refused(tokenizer: Any) -> None:
    report = check_launch("tictactoe", tokenizer, TokenLimits(max_tokens=16, max_context=300), max_turns=5)
    assert [f.key for f in report.problems] == ["max_context", "horizon"] == list(report.advice)
    context, horizon = report.problems
    assert "'s side of the oracle's finished game (task 0, longest of 1 played) takes" in context.message
    assert report.episode_tokens is not None and report.advice["max_context"] > report.episode_tokens
    assert f"max_context>={report.advice['max_context']}" in context.message
    assert "the oracle needs 9 turns on task 0 but the run allows at most 5" in horizon.message
    assert report.advice["horizon"] == 9
