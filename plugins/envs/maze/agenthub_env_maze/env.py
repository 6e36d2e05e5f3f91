"""``maze``: LMRL-Gym's fully observed maze, as AgentGym serves it.

Each turn the agent is told where the goal is, where it is, and which of the four
squares around it are walls, and answers "move up", "move down", "move left" or
"move right". Reaching the goal ends the episode with reward 1.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from agenthub import Action, begin_reset

from agenthub_env_maze.grid import ACTIONS, Maze, Position
from agenthub_env_maze.tasks import TRAIN, maze_for_task

DEFAULT_MAX_STEPS = 50  # LMRL-Gym's and AgentGym's max_steps

_ACTION_LIST = ", ".join(f'"{a}"' for a in ACTIONS)
# AgentGym's prompt asks for "Thought: ...\n\nAction:\n<action>"; take what follows the last "Action:".
_ACTION_LABEL = re.compile(r"action\s*:", re.IGNORECASE)
_DIRECTIONS = {"up", "down", "left", "right"}

StepTuple = tuple[str, float, bool, bool, dict[str, Any]]


def parse_move(action: Action) -> str | None:
    """``"move up"`` etc. from an agent's reply, or ``None`` if it names no move.

    Accepts "move up", "up", "Move Up." and AgentGym's "Thought: ... Action: move up".
    """
    if not isinstance(action, str):
        return None
    text = _ACTION_LABEL.split(action)[-1].strip().strip(".!\"'`").strip().lower()
    words = text.split()
    if len(words) == 2 and words[0] == "move":
        words = words[1:]
    if len(words) == 1 and words[0] in _DIRECTIONS:
        return f"move {words[0]}"
    return None


class MazeEnv:
    """Reach the goal square of a maze in at most ``max_steps`` moves.

    Reward is 1.0 on the move that reaches the goal and 0 otherwise. A move into a
    wall leaves the agent in place. An action that is not a move is answered with
    the list of moves and also uses up a move, as in LMRL-Gym. After ``max_steps``
    moves without reaching the goal the episode is truncated.
    """

    def __init__(self, max_steps: int = DEFAULT_MAX_STEPS) -> None:
        if max_steps < 1:
            raise ValueError(f"max_steps must be at least 1, got {max_steps}")
        self.max_steps = max_steps
        self._maze: Maze | None = None
        self._position: Position = (0, 0)
        self._steps = 0
        self._done = False

    def reset(
        self,
        *,
        task_id: int | str | None = None,
        seed: int | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> tuple[str, dict[str, Any]]:
        # Only the choice of task is random: the maze itself depends on the task id alone.
        start = begin_reset("maze", task_id=task_id, seed=seed, options=options, train=TRAIN)
        self._maze = maze_for_task(start.task_id)
        self._position = self._maze.start
        self._steps = 0
        self._done = False
        intro = (
            "You are in a maze. Your objective is to reach the goal in as few moves as possible. "
            'Positions are written as "row, column": moving down adds 1 to the row and moving right '
            "adds 1 to the column. After every move you are told where the goal is, where you are, "
            "and which of the four squares next to you are walls; moving into a wall leaves you where you are. "
            f"You have {self.max_steps} moves. Your possible actions are {_ACTION_LIST}."
        )
        return f"{intro}\n\n{self._maze.describe(self._position)}", self._info()

    def step(self, action: Action) -> StepTuple:
        if self._maze is None:
            raise RuntimeError("step() called before reset()")
        if self._done:
            return "The episode is over. Reset to play again.", 0.0, True, False, self._info()
        move = parse_move(action)
        self._steps += 1
        if move is None:
            text = f"{_clip(action)!r} is not a valid action. Your possible actions are {_ACTION_LIST}."
            info = {**self._info(), "invalid_action": True}
        else:
            self._position = self._maze.move(self._position, move)
            text, info = "", self._info()
        if self._position == self._maze.goal:
            self._done = True
            plural = "move" if self._steps == 1 else "moves"
            text = f"Success. You reached the goal in {self._steps} {plural}."
            return text, 1.0, True, False, {**self._info(), "won": True, "score": 1.0}
        if self._steps >= self.max_steps:
            self._done = True
            text = f"{text} Failure. You did not reach the goal within {self.max_steps} moves.".strip()
            return text, 0.0, False, True, {**info, "won": False, "score": 0.0}
        observation = self._maze.describe(self._position)
        return f"{text}\n{observation}".strip(), 0.0, False, False, info

    def close(self) -> None:
        self._maze = None

    def _info(self) -> dict[str, Any]:
        return {"available_actions": list(ACTIONS), "moves": self._steps}


def _clip(action: Action, limit: int = 60) -> str:
    text = action if isinstance(action, str) else f"{action.name}({action.arguments})"
    return text if len(text) <= limit else text[: limit - 3] + "..."
