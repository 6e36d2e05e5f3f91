"""``tictactoe``: the built-in two-player environment, and its oracle that never loses.

Seat 0 plays X and moves first, seat 1 plays O. Every task is the empty board: the task id
names the game (an opponent such as ``random`` draws its moves from it), so a split is a
set of games to play. A move is ``place N`` (or just ``N``) for a free cell from 1 to 9,
numbered row by row. A move the env cannot read, or onto a taken cell, is answered in
words and the same seat moves again. The winner gets reward 1 and the loser -1; a draw
gives both 0.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Any

from agenthub.env_reset import check_reset_options, check_seed
from agenthub.errors import AgenthubError
from agenthub.protocols import SeatStep
from agenthub.types import Action, AgentReply, EnvInfo, Observation, Task, TaskId, TaskSplit

SPLITS = {"train": TaskSplit.range(0, 10_000), "test": TaskSplit.range(10_000, 10_500)}
MARKS = ("X", "O")
LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))
INSTRUCTIONS = (
    "You are playing tic-tac-toe on a 3x3 board whose cells are numbered 1 to 9, row by row. Players "
    "take turns; three of your marks in a row, column or diagonal wins. Each turn, answer with exactly "
    "one action of the form 'place N' for a free cell N, and nothing else."
)
# Matched against the stripped reply, so that no two whitespace runs meet (see ``guess``): linear time.
_MOVE = re.compile(r"(?:place\s*)?([1-9])\s*[.!]?", re.IGNORECASE)


def parse_move(action: Action) -> int | None:
    """The cell (1 to 9) of ``place N`` or ``N``, optionally ending in ``.``/``!``; None for anything else."""
    match = _MOVE.fullmatch(action.strip()) if isinstance(action, str) else None
    return int(match.group(1)) if match is not None else None


def render(board: str) -> str:
    """The board as three rows, free cells shown by their number."""
    cells = [mark if mark != "." else str(i + 1) for i, mark in enumerate(board)]
    return "\n".join(" " + " | ".join(cells[row : row + 3]) for row in (0, 3, 6))


def winner(board: str) -> str | None:
    """The mark with three in a row, or None."""
    for a, b, c in LINES:
        if board[a] != "." and board[a] == board[b] == board[c]:
            return board[a]
    return None


class TicTacToeEnv:
    """Two seats, one board: an ``agenthub.MultiPlayerEnvironment``."""

    players = 2

    def __init__(self) -> None:
        self._board = "." * 9
        self._seat = 0
        self._done = True

    def reset(
        self,
        *,
        task_id: TaskId | None = None,
        seed: int | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> tuple[str, dict[str, Any], int]:
        # Every task is the same game, so no task is drawn: only the arguments are checked.
        check_reset_options("tictactoe", options)
        check_seed(seed)
        if task_id is not None and (isinstance(task_id, bool) or not isinstance(task_id, int) or task_id < 0):
            raise ValueError(f"tictactoe task ids are non-negative integers, got {task_id!r}")
        self._board = "." * 9
        self._seat = 0
        self._done = False
        return self._prompt(0, "A new game. You move first."), self._info(0), 0

    def step(self, seat: int, action: Action) -> SeatStep:
        if self._done:
            text = "The game is over. Reset to play again."
            return SeatStep({s: text for s in range(2)}, {}, True, False, {}, seat)
        move = parse_move(action)
        if move is None:
            return self._again(seat, f"I did not understand {_clip(action)!r}. Answer with: place N (N from 1 to 9).")
        cell = move - 1
        if self._board[cell] != ".":
            return self._again(seat, f"Cell {cell + 1} is taken. Choose a free cell.")
        mark = MARKS[seat]
        self._board = self._board[:cell] + mark + self._board[cell + 1 :]
        played = f"{mark} placed a mark in cell {cell + 1}."
        if (won := winner(self._board)) is not None or "." not in self._board:
            self._done = True
            return self._end(seat if won else None, played)
        self._seat = 1 - seat
        opponent = self._seat
        return SeatStep({opponent: self._prompt(opponent, played)}, {}, False, False, self._info(opponent), opponent)

    def close(self) -> None:
        self._done = True

    def _again(self, seat: int, why: str) -> SeatStep:
        info = {**self._info(seat), "invalid_action": True}
        return SeatStep({seat: self._prompt(seat, why)}, {}, False, False, info, seat)

    def _end(self, winning_seat: int | None, played: str) -> SeatStep:
        board = render(self._board)
        if winning_seat is None:
            texts = {s: f"{played}\n{board}\nThe board is full: a draw." for s in range(2)}
            return SeatStep(texts, {0: 0.0, 1: 0.0}, True, False, {"winner": None, "board": self._board}, 0)
        mark = MARKS[winning_seat]
        texts = {
            s: f"{played}\n{board}\n{mark} has three in a row: you {'won' if s == winning_seat else 'lost'}."
            for s in range(2)
        }
        rewards = {winning_seat: 1.0, 1 - winning_seat: -1.0}
        return SeatStep(texts, rewards, True, False, {"winner": winning_seat, "board": self._board}, winning_seat)

    def _prompt(self, seat: int, news: str) -> str:
        return f"{news}\nYou play {MARKS[seat]}. The board:\n{render(self._board)}\nYour move: place N."

    def _info(self, seat: int) -> dict[str, Any]:
        free = [f"place {i + 1}" for i, mark in enumerate(self._board) if mark == "."]
        return {"available_actions": free, "board": self._board, "mark": MARKS[seat]}


@functools.cache
def _value(board: str, mark: str) -> int:
    """The game's value for ``mark``, to move on ``board``, under perfect play: 1, 0 or -1."""
    if winner(board) is not None:
        return -1  # the previous move won
    if "." not in board:
        return 0
    other = MARKS[1 - MARKS.index(mark)]
    return max(-_value(board[:i] + mark + board[i + 1 :], other) for i, c in enumerate(board) if c == ".")


def best_cell(board: str, mark: str) -> int:
    """A cell (0-8) of best play for ``mark``; the lowest of equally good ones, so play is deterministic."""
    other = MARKS[1 - MARKS.index(mark)]
    free = [i for i, c in enumerate(board) if c == "."]
    if not free:
        raise AgenthubError(f"the board {board!r} is full; there is no move to make")
    return max(free, key=lambda i: (-_value(board[:i] + mark + board[i + 1 :], other), -i))


class TicTacToeOracleEpisode:
    async def act(self, observation: Observation) -> AgentReply:
        board, mark = observation.info.get("board"), observation.info.get("mark")
        if not isinstance(board, str) or mark not in MARKS:
            raise AgenthubError(
                "the tictactoe oracle reads info['board'] and info['mark'], and this observation has neither; "
                "play it on env 'tictactoe'"
            )
        action = f"place {best_cell(board, str(mark)) + 1}"
        return AgentReply(action=action, text=action)


class TicTacToeOracle:
    """Perfect play by minimax: it never loses, from either seat."""

    def start_episode(self, task: Task, env: EnvInfo) -> TicTacToeOracleEpisode:
        if env.name != "tictactoe":
            raise AgenthubError(f"the tictactoe oracle only plays env 'tictactoe', not {env.name!r}")
        return TicTacToeOracleEpisode()


def _clip(action: Action, limit: int = 60) -> str:
    text = action if isinstance(action, str) else f"{action.name}({action.arguments})"
    return text if len(text) <= limit else text[: limit - 3] + "..."
