"""benchmarks/maze_observation_ceiling.py: what the maze agent's view (and its own last move) can win."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("agenthub_env_maze")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import maze_observation_ceiling as ceiling  # a benchmarks/ module, importable once its folder is on the path
import summarize
from agenthub_env_maze.tasks import TEST


def test_a_walk_that_never_undoes_its_move_wins_the_test_maze_more_often_than_a_random_open_move() -> None:
    tests = range(TEST.start, TEST.stop or 0)
    walls = ceiling.blind_walk_success(tests, 20, samples=40, no_reverse=False)
    forward = ceiling.blind_walk_success(tests, 20, samples=40, no_reverse=True)
    assert 0 < walls < forward < 1  # the double-T is a tree: a forward walk turns back only at dead ends
    assert forward == ceiling.blind_walk_success(tests, 20, samples=40, no_reverse=True)  # seeded: reproducible
    one_move = ceiling.blind_walk_success(tests, 1, samples=40, no_reverse=True)
    assert 0 < one_move < 2 / 25  # only (7, 6) and (5, 6) are a move from the goal, each with other open moves


def test_quick_run_writes_the_goal_blind_walks_and_the_page_renders_them(tmp_path: Path) -> None:
    assert ceiling.main(["--quick", "--out", str(tmp_path)]) == 0
    result = json.loads((tmp_path / "maze_observation_ceiling.json").read_text())
    blind = result["goal_blind"]
    assert [h["max_turns"] for h in blind["train"]] == list(ceiling.BLIND_HORIZONS)
    assert all(0 <= h["walls"] <= 1 and 0 <= h["no_reverse"] <= 1 for h in blind["train"])
    text = "\n".join(summarize.maze_ceiling_lines(result))
    assert "| tasks | turn limit | random open move | never undo the last move |" in text
    assert (
        f"| test (25 double-T starts) | 20 | {blind['test']['walls']:.2f} | {blind['test']['no_reverse']:.2f} |" in text
    )
