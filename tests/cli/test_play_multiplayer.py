"""``agenthub play`` on a multi-player env, run as a user runs it, with the human's moves on stdin (issue 20)."""

from __future__ import annotations

import subprocess
import sys

AGENTHUB = [sys.executable, "-m", "agenthub"]


def play(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([*AGENTHUB, "play", *args], input=stdin, capture_output=True, text=True, timeout=120)


def test_a_human_plays_both_seats_in_turn_and_each_prompt_names_the_seat_on_turn() -> None:
    moves = ["place 5", "place 1", "place 9", "place 3", "place 2", "place 7", "place 4", "place 6", "place 8"]
    result = play("env=tictactoe", "agent=human", "task_id=10000", stdin="\n".join(moves) + "\n")
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert "X (seat 0): human, O (seat 1): human" in out
    assert out.count("X (seat 0) to move> ") == 5 and out.count("O (seat 1) to move> ") == 4
    assert "[2] O (seat 1): human\n    X placed a mark in cell 5." in out
    assert "X has three in a row: you won." in out
    assert "X (seat 0): human   win   return: 1   turns: 5" in out
    assert "O (seat 1): human   loss   return: -1   turns: 4" in out
    assert "outcome: game over, X (seat 0) won   steps: 9" in out


def test_a_human_plays_one_seat_against_the_oracle() -> None:
    # O against the never-losing oracle: a taken cell is answered in words and O moves again
    result = play(
        "env=tictactoe", "agent=human", "seat=1", "opponent=oracle", "task_id=10000",
        stdin="place 5\nplace 1\nplace 5\nplace 3\nplace 4\nplace 8\nplace 9\n",
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert "X (seat 0): tictactoe-oracle, O (seat 1): human" in out
    assert "X (seat 0) to move>" not in out and "O (seat 1) to move> place 5" in out
    assert "Cell 5 is taken. Choose a free cell." in out
    assert "O (seat 1): human   " in out and "outcome: game over" in out
    assert "X (seat 0): tictactoe-oracle   loss" not in out  # the oracle never loses


def test_the_oracle_plays_both_seats_by_default_and_stdin_running_out_ends_the_game_in_words() -> None:
    result = play("env=tictactoe", "task_id=10000")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "    > place 1" in result.stdout and "outcome: game over, a draw   steps: 9" in result.stdout
    ended = play("env=tictactoe", "agent=human", "opponent=oracle", stdin="place 1\n")
    assert ended.returncode == 1
    assert "stdin ended before the episode did; type one action per line" in ended.stdout


def test_seat_and_opponent_are_checked_before_a_server_starts() -> None:
    result = play("env=tictactoe", "opponent=random", "seat=2")
    assert result.returncode == 2 and "env 'tictactoe' has seats 0 to 1; seat=2 does not exist" in result.stderr
    result = play("env=tictactoe", "seat=1")
    assert result.returncode == 2 and "seat= and opponent_kwargs go with opponent=NAME" in result.stderr
    result = play("env=guess", "opponent=oracle")
    assert result.returncode == 2 and "env 'guess' is single-player; opponent= and seat= are for" in result.stderr
