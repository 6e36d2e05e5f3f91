"""``maze-oracle``: follows a shortest path (BFS) to the goal.

It rebuilds the task's maze from the task id, reads its position from each
observation and plans again from there, so a turn it did not expect (a bump
into a wall, a move it did not make) never throws it off course.
"""

from __future__ import annotations

import re

from agenthub import AgenthubError, AgentReply, EnvInfo, Observation, Task

from agenthub_env_maze.grid import Maze
from agenthub_env_maze.tasks import maze_for_task

_POSITION = re.compile(r"Your current position is at position (\d+), (\d+)\.")
_GOAL = re.compile(r"The goal is at position (\d+), (\d+)\.")


class MazeOracleEpisode:
    def __init__(self, maze: Maze) -> None:
        self.maze = maze

    async def act(self, observation: Observation) -> AgentReply:
        positions = _POSITION.findall(observation.text)
        if not positions:
            raise AgenthubError(
                f"the maze oracle found no 'Your current position is at position R, C.' in {observation.text[:200]!r}; "
                "it plays only the maze env's own observations"
            )
        goals = _GOAL.findall(observation.text)
        if goals and tuple(map(int, goals[-1])) != self.maze.goal:
            raise AgenthubError(
                f"the observation's goal {goals[-1]} is not the goal {self.maze.goal} of this task's maze; "
                "was the env served with other maze settings than the oracle knows?"
            )
        row, col = map(int, positions[-1])
        try:
            path = self.maze.shortest_path((row, col))
        except ValueError as exc:
            raise AgenthubError(f"the maze oracle cannot plan from ({row}, {col}): {exc}") from exc
        if not path:
            raise AgenthubError(
                f"the maze oracle is already at the goal {self.maze.goal}; the episode should have ended"
            )
        return AgentReply(action=path[0], text=path[0])


class MazeOracle:
    """Wins every maze task in the fewest possible moves."""

    def start_episode(self, task: Task, env: EnvInfo) -> MazeOracleEpisode:
        if env.name != "maze":
            raise AgenthubError(f"the maze oracle only plays env 'maze', not {env.name!r}")
        try:
            maze = maze_for_task(task.task_id)
        except ValueError as exc:
            raise AgenthubError(f"the maze oracle cannot play task {task.task_id!r}: {exc}") from exc
        return MazeOracleEpisode(maze)
