"""Maze grids: the LMRL-Gym double-T maze, generated mazes, and shortest paths.

Positions are ``(row, column)`` as in LMRL-Gym: "move down" adds 1 to the row,
"move right" adds 1 to the column. Pure Python, so the plugin stays light.
"""

from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass

Position = tuple[int, int]

MOVES: dict[str, Position] = {
    "move up": (-1, 0),
    "move down": (1, 0),
    "move left": (0, -1),
    "move right": (0, 1),
}
ACTIONS: list[str] = list(MOVES)

# The order LMRL-Gym lists neighbouring walls in.
_WALL_WORDS: list[tuple[str, Position]] = [
    ("to your right", (0, 1)),
    ("to your left", (0, -1)),
    ("above you", (-1, 0)),
    ("below you", (1, 0)),
]


@dataclass(frozen=True)
class Maze:
    """A grid of walls (``True``) and open squares, with a start and a goal square."""

    walls: tuple[tuple[bool, ...], ...]
    start: Position
    goal: Position

    def __post_init__(self) -> None:
        for name, pos in (("start", self.start), ("goal", self.goal)):
            if not self.is_open(pos):
                raise ValueError(f"the maze's {name} {pos} is not an open square")

    @property
    def rows(self) -> int:
        return len(self.walls)

    @property
    def cols(self) -> int:
        return len(self.walls[0])

    def is_open(self, pos: Position) -> bool:
        row, col = pos
        return 0 <= row < self.rows and 0 <= col < self.cols and not self.walls[row][col]

    def move(self, pos: Position, action: str) -> Position:
        """Where ``action`` leads from ``pos``; into a wall it leaves you in place, as in LMRL-Gym."""
        d_row, d_col = MOVES[action]
        target = (pos[0] + d_row, pos[1] + d_col)
        return target if self.is_open(target) else pos

    def describe(self, pos: Position) -> str:
        """LMRL-Gym's fully observed description, as AgentGym serves it."""
        walls = [words for words, (dr, dc) in _WALL_WORDS if not self.is_open((pos[0] + dr, pos[1] + dc))]
        if not walls:
            wall_text = "There are no walls near you."
        elif len(walls) == 1:
            wall_text = f"There is a wall {walls[0]}."
        else:
            wall_text = f"There are walls {', '.join(walls)}."
        return (
            f"The goal is at position {self.goal[0]}, {self.goal[1]}. "
            f"Your current position is at position {pos[0]}, {pos[1]}. {wall_text}"
        )

    def shortest_path(self, source: Position | None = None) -> list[str]:
        """The moves of a shortest path from ``source`` (default: the start) to the goal (BFS)."""
        source = self.start if source is None else source
        if not self.is_open(source):
            raise ValueError(f"{source} is not an open square of this maze")
        came_from: dict[Position, tuple[Position, str] | None] = {source: None}
        queue = deque([source])
        while queue:
            pos = queue.popleft()
            if pos == self.goal:
                break
            for action in ACTIONS:
                nxt = self.move(pos, action)
                if nxt not in came_from:
                    came_from[nxt] = (pos, action)
                    queue.append(nxt)
        if self.goal not in came_from:
            raise ValueError(f"the goal {self.goal} cannot be reached from {source}")
        path: list[str] = []
        pos = self.goal
        while (step := came_from[pos]) is not None:
            pos, action = step
            path.append(action)
        return path[::-1]

    def render(self, pos: Position | None = None) -> str:
        """A text picture for debugging: '#' wall, 'G' goal, '@' you."""
        lines = []
        for r, row in enumerate(self.walls):
            cells = []
            for c, wall in enumerate(row):
                here = (r, c)
                cells.append("@" if here == pos else "G" if here == self.goal else "#" if wall else ".")
            lines.append("".join(cells))
        return "\n".join(lines)


# LMRL-Gym's double-T maze (13 x 10) with its goal and the start positions AgentGym numbers as games.
_DOUBLE_T = (
    "#############",
    "#.....#.....#",
    "###.#####.###",
    "###.#####.###",
    "###.#####.###",
    "###.......###",
    "######.######",
    "######.######",
    "######.######",
    "#############",
)
DOUBLE_T_GOAL: Position = (8, 6)
# AgentGym's list also has (8, 6), the goal itself, as game 25; LMRL-Gym refuses it, so it is left out.
DOUBLE_T_STARTS: tuple[Position, ...] = (
    (1, 1), (1, 2), (1, 3), (1, 4), (1, 5), (1, 7), (1, 8), (1, 9), (1, 10), (1, 11),
    (2, 3), (3, 3), (4, 3), (5, 3), (5, 4), (5, 5), (5, 6), (6, 6), (7, 6),
    (5, 7), (5, 8), (5, 9), (4, 9), (3, 9), (2, 9),
)  # fmt: skip


def double_t_maze(start: Position) -> Maze:
    walls = tuple(tuple(ch == "#" for ch in line) for line in _DOUBLE_T)
    return Maze(walls=walls, start=start, goal=DOUBLE_T_GOAL)


def generate_maze(
    rng: random.Random,
    *,
    rows: int = 11,
    cols: int = 13,
    extra_openings: int = 3,
    min_distance: int = 3,
    max_distance: int = 25,
) -> Maze:
    """A random maze drawn with ``rng``: depth-first carving plus a few loops.

    The size matches LMRL-Gym's ``random_maze`` (13 x 10, made odd: 13 x 11).
    The start is a square from ``min_distance`` to ``max_distance`` moves from the goal.
    """
    if rows < 5 or cols < 5 or rows % 2 == 0 or cols % 2 == 0:
        raise ValueError(f"maze rows and cols must be odd and at least 5, got {rows} x {cols}")
    grid = [[True] * cols for _ in range(rows)]
    cells = [(r, c) for r in range(1, rows, 2) for c in range(1, cols, 2)]
    first = rng.choice(cells)
    grid[first[0]][first[1]] = False
    stack = [first]
    while stack:
        r, c = stack[-1]
        unvisited = [
            (r + dr, c + dc)
            for dr, dc in ((-2, 0), (2, 0), (0, -2), (0, 2))
            if 0 < r + dr < rows - 1 and 0 < c + dc < cols - 1 and grid[r + dr][c + dc]
        ]
        if not unvisited:
            stack.pop()
            continue
        nr, nc = rng.choice(unvisited)
        grid[(r + nr) // 2][(c + nc) // 2] = False
        grid[nr][nc] = False
        stack.append((nr, nc))
    # Knock out a few inner walls between two open squares, so that there is more than one way round.
    between = [
        (r, c)
        for r in range(1, rows - 1)
        for c in range(1, cols - 1)
        if grid[r][c]
        and (
            (r % 2 == 1 and c % 2 == 0 and not grid[r][c - 1] and not grid[r][c + 1])
            or (r % 2 == 0 and c % 2 == 1 and not grid[r - 1][c] and not grid[r + 1][c])
        )
    ]
    for r, c in rng.sample(between, min(extra_openings, len(between))):
        grid[r][c] = False
    walls = tuple(tuple(row) for row in grid)
    open_squares = [(r, c) for r in range(rows) for c in range(cols) if not grid[r][c]]
    goal = rng.choice(open_squares)
    distances = _distances(Maze(walls=walls, start=goal, goal=goal), goal)
    starts = [pos for pos in open_squares if min_distance <= distances[pos] <= max_distance]
    if not starts:
        raise ValueError(f"no start square is {min_distance} to {max_distance} moves from the goal; widen the range")
    return Maze(walls=walls, start=rng.choice(starts), goal=goal)


def _distances(maze: Maze, source: Position) -> dict[Position, int]:
    dist = {source: 0}
    queue = deque([source])
    while queue:
        pos = queue.popleft()
        for action in ACTIONS:
            nxt = maze.move(pos, action)
            if nxt not in dist:
                dist[nxt] = dist[pos] + 1
                queue.append(nxt)
    return dist
