"""The maze layouts: LMRL-Gym's double-T maze and the generated ones."""

from __future__ import annotations

import random

import pytest

from agenthub_env_maze.grid import DOUBLE_T_GOAL, double_t_maze, generate_maze
from agenthub_env_maze.tasks import SPLITS, TEST, TRAIN, maze_for_task


@pytest.mark.parametrize(
    ("position", "walls"),
    [
        # The wording of AgentGym's example episode, square by square.
        ((5, 6), "There is a wall above you."),
        ((5, 5), "There are walls above you, below you."),
        ((5, 3), "There are walls to your left, below you."),
        ((6, 6), "There are walls to your right, to your left."),
    ],
)
def test_double_t_describes_walls_as_lmrl_gym(position: tuple[int, int], walls: str) -> None:
    maze = double_t_maze(start=(1, 1))
    assert maze.describe(position) == (
        f"The goal is at position 8, 6. Your current position is at position {position[0]}, {position[1]}. {walls}"
    )


def test_test_split_is_agentgyms_double_t_games() -> None:
    assert TEST.count == 25
    starts = [maze_for_task(task_id).start for task_id in range(TEST.count)]
    assert starts[0] == (1, 1) and starts[-1] == (2, 9)
    assert all(maze_for_task(task_id).goal == DOUBLE_T_GOAL for task_id in range(TEST.count))
    assert len(set(starts)) == 25


def test_generated_maze_depends_on_task_id_only() -> None:
    assert maze_for_task(1_234) == maze_for_task(1_234)
    assert len({maze_for_task(task_id) for task_id in range(1_000, 1_020)}) == 20


def test_generating_leaves_the_global_rng_alone() -> None:
    random.seed(99)
    before = random.getstate()
    maze_for_task(5_000)
    assert random.getstate() == before


@pytest.mark.parametrize("task_id", [*TRAIN.first(30), *SPLITS["test-random"].first(30)])
def test_generated_mazes_are_closed_and_solvable_in_range(task_id: int) -> None:
    maze = maze_for_task(task_id)
    assert all(maze.walls[0]) and all(maze.walls[-1])
    assert all(row[0] and row[-1] for row in maze.walls)
    assert 3 <= len(maze.shortest_path()) <= 25


def test_generate_maze_refuses_even_sizes() -> None:
    with pytest.raises(ValueError, match="odd"):
        generate_maze(random.Random(0), rows=10)


@pytest.mark.parametrize("task_id", [-1, 25, 999, 101_000, 2_000_000, "3", True, None])
def test_unknown_task_ids_are_refused_with_the_valid_ranges(task_id: object) -> None:
    with pytest.raises(ValueError, match="valid ids are train: 1000-100999, test: 0-24"):
        maze_for_task(task_id)
