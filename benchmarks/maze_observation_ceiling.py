"""What a policy that reads only the current observation can learn from the maze oracle's demonstrations.

The AgentGym-RL recipe (examples/agentgym_recipe) warm-starts a tiny model on the maze oracle's wins. The
oracle plans with the whole maze (BFS); the agent is told only the goal, its position and which of the
four squares next to it are walls. So some of the oracle's moves cannot be predicted from what the agent
sees, and this script measures how many, on the recipe's own data (its first ``--mazes`` train tasks)
and on as many other train mazes (``held out``):

- **lookup**: the best table from observation (goal, position, walls) to move, fitted on the demonstrations
  themselves: an upper bound for memorising them; and what the same table scores on the held-out mazes;
- **walls**: the best table from the walls alone (what the recipe's SFT start reached, 40-46% of moves);
- **greedy**: the rule "of the moves that do not bump into a wall, take one that most shortens the
  straight-line (Manhattan) distance to the goal": its agreement with the oracle, move by move, and its
  win rate as a policy on the ``test`` split (AgentGym's 25 double-T starts) and ``test-random``
  within the recipe's 20 moves;
- **goal-blind walks**: policies that never read the goal, sampled: a random open move (what a start that
  learnt only the walls plays), and a random open move that does not undo the last one unless it must
  (walls plus the agent's own last move, both in its context). Their success on the ``test`` split and on
  train mazes at the recipe's GRPO turn limits says what an agent can gain without comparing positions.

    python benchmarks/maze_observation_ceiling.py          # seconds; --mazes 500 as the recipe's oracle stage
    python benchmarks/maze_observation_ceiling.py --quick  # 50 mazes, to a temp dir

Writes benchmarks/results/maze_observation_ceiling.json.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
from collections import Counter, defaultdict
from collections.abc import Iterator
from pathlib import Path

from agenthub_env_maze.grid import ACTIONS, MOVES, Maze, Position
from agenthub_env_maze.tasks import TEST, TEST_RANDOM, TRAIN, maze_for_task
from provenance import write_result  # a sibling module of this script

RESULTS = Path(__file__).resolve().parent / "results"
Walls = tuple[bool, ...]
Observation = tuple[Position, Position, Walls]


def walls_at(maze: Maze, pos: Position) -> Walls:
    return tuple(maze.move(pos, action) == pos for action in ACTIONS)


def oracle_moves(task_ids: range) -> Iterator[tuple[Maze, Position, str]]:
    """Every (maze, position, oracle move) of the oracle's shortest path in each task."""
    for task_id in task_ids:
        maze = maze_for_task(task_id)
        pos = maze.start
        for action in maze.shortest_path():
            yield maze, pos, action
            pos = maze.move(pos, action)


def greedy(maze: Maze, pos: Position) -> str:
    """Of the moves that go somewhere, the first (in ACTIONS order) that is closest to the goal afterwards."""
    open_moves = [a for a in ACTIONS if maze.move(pos, a) != pos]

    def distance(action: str) -> int:
        row, col = maze.move(pos, action)
        return abs(row - maze.goal[0]) + abs(col - maze.goal[1])

    return min(open_moves, key=distance)


def greedy_wins(task_ids: range, max_turns: int) -> int:
    wins = 0
    for task_id in task_ids:
        maze = maze_for_task(task_id)
        pos = maze.start
        for _ in range(max_turns):
            if pos == maze.goal:
                break
            pos = maze.move(pos, greedy(maze, pos))
        wins += pos == maze.goal
    return wins


# The move that undoes each move, from the grid's own offsets.
REVERSE = {a: b for a, (dr, dc) in MOVES.items() for b, offset in MOVES.items() if offset == (-dr, -dc)}
BLIND_HORIZONS = (8, 12, 16, 20)


def blind_walk_success(task_ids: range, max_turns: int, samples: int, no_reverse: bool, seed: int = 0) -> float:
    """Share of ``samples`` walks a task that reach the goal within ``max_turns`` without reading the goal."""
    rng = random.Random(seed)
    wins = 0
    for task_id in task_ids:
        maze = maze_for_task(task_id)
        for _ in range(samples):
            pos, last = maze.start, None
            for _ in range(max_turns):
                open_moves = [a for a in ACTIONS if maze.move(pos, a) != pos]
                forward = [a for a in open_moves if not no_reverse or a != REVERSE.get(last or "")]
                last = rng.choice(forward or open_moves)
                pos = maze.move(pos, last)
                if pos == maze.goal:
                    wins += 1
                    break
    return round(wins / (len(task_ids) * samples), 4)


def goal_blind(max_turns: int, train_tasks: int, samples: int) -> dict[str, object]:
    test_ids = range(TEST.start, TEST.stop or 0)
    train_ids = range(TRAIN.start, TRAIN.start + train_tasks)
    return {
        "samples_per_task": samples,
        "train_tasks": train_tasks,
        "test": {
            "max_turns": max_turns,
            "walls": blind_walk_success(test_ids, max_turns, samples, no_reverse=False),
            "no_reverse": blind_walk_success(test_ids, max_turns, samples, no_reverse=True),
        },
        "train": [
            {
                "max_turns": horizon,
                "walls": blind_walk_success(train_ids, horizon, samples, no_reverse=False),
                "no_reverse": blind_walk_success(train_ids, horizon, samples, no_reverse=True),
            }
            for horizon in BLIND_HORIZONS
        ],
    }


def best_table_share(tables: dict[object, Counter[str]], moves: int) -> float:
    return sum(counts.most_common(1)[0][1] for counts in tables.values()) / moves


def measure(mazes: int, max_turns: int, random_tests: int, blind_samples: int = 40) -> dict[str, object]:
    seen = range(TRAIN.start, TRAIN.start + mazes)
    held_out = range(TRAIN.start + mazes, TRAIN.start + 2 * mazes)
    by_observation: dict[Observation, Counter[str]] = defaultdict(Counter)
    by_walls: dict[Walls, Counter[str]] = defaultdict(Counter)
    moves = greedy_agrees = 0
    for maze, pos, action in oracle_moves(seen):
        walls = walls_at(maze, pos)
        by_observation[(maze.goal, pos, walls)][action] += 1
        by_walls[walls][action] += 1
        greedy_agrees += greedy(maze, pos) == action
        moves += 1
    lookup = {obs: counts.most_common(1)[0][0] for obs, counts in by_observation.items()}
    walls_only = {walls: counts.most_common(1)[0][0] for walls, counts in by_walls.items()}
    other = observed = lookup_hits = walls_hits = other_greedy = 0
    for maze, pos, action in oracle_moves(held_out):
        walls = walls_at(maze, pos)
        other += 1
        observed += (maze.goal, pos, walls) in lookup
        lookup_hits += lookup.get((maze.goal, pos, walls)) == action
        walls_hits += walls_only.get(walls) == action
        other_greedy += greedy(maze, pos) == action
    random_ids = range(TEST_RANDOM.start, TEST_RANDOM.start + random_tests)
    return {
        "demonstrations": {
            "mazes": mazes,
            "moves": moves,
            "distinct_observations": len(by_observation),
            "lookup_share": round(best_table_share(by_observation, moves), 4),
            "walls_share": round(best_table_share(by_walls, moves), 4),
            "greedy_share": round(greedy_agrees / moves, 4),
        },
        "held_out": {
            "mazes": mazes,
            "moves": other,
            "observation_seen_share": round(observed / other, 4),
            "lookup_share": round(lookup_hits / other, 4),
            "walls_share": round(walls_hits / other, 4),
            "greedy_share": round(other_greedy / other, 4),
        },
        "greedy_policy": {
            "max_turns": max_turns,
            "test_wins": greedy_wins(range(TEST.start, TEST.stop or 0), max_turns),
            "test_tasks": (TEST.stop or 0) - TEST.start,
            "test_random_wins": greedy_wins(random_ids, max_turns),
            "test_random_tasks": random_tests,
        },
        "goal_blind": goal_blind(max_turns, train_tasks=mazes, samples=blind_samples),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mazes", type=int, default=500, help="train mazes of the demonstrations (the recipe's n)")
    parser.add_argument("--max-turns", type=int, default=20, help="the recipe's test max_turns")
    parser.add_argument("--random-tests", type=int, default=1000, help="test-random tasks the greedy rule plays")
    parser.add_argument("--blind-samples", type=int, default=40, help="goal-blind walks per task")
    parser.add_argument("--quick", action="store_true", help="50 mazes, 100 random tests, 4 walks a task; temp dir")
    parser.add_argument("--out", type=Path, default=None, help=f"folder for the JSON (default {RESULTS})")
    args = parser.parse_args(argv)
    if args.quick:
        args.mazes, args.random_tests, args.blind_samples = 50, 100, 4
    out = args.out or (Path(tempfile.mkdtemp(prefix="maze-ceiling-")) if args.quick else RESULTS)
    out.mkdir(parents=True, exist_ok=True)
    report = measure(args.mazes, args.max_turns, args.random_tests, args.blind_samples)
    write_result(out / "maze_observation_ceiling.json", report, args)
    seen, held, policy = report["demonstrations"], report["held_out"], report["greedy_policy"]
    print(f"demonstrations: {seen}\nheld out: {held}\ngreedy policy: {policy}\ngoal-blind: {report['goal_blind']}")
    print(f"wrote {out / 'maze_observation_ceiling.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
