"""What the agent sees, in AgentGym's words.

The wording, the order of objects and the per-name numbering ("red ball 1",
"red ball 2") follow AgentGym's BabyAI server, so that prompts and trained
policies carry over. Positions are relative to the agent: "3 steps in front
of you and 1 steps to your left" (AgentGym's plural, kept on purpose).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from minigrid.core.constants import DIR_TO_VEC, IDX_TO_COLOR, IDX_TO_OBJECT, STATE_TO_IDX

Pos = tuple[int, int]

IDX_TO_STATE = {index: state for state, index in STATE_TO_IDX.items()}
# Object types worth naming; floor, empty and unseen cells are not.
_NAMED_TYPES = frozenset({"door", "key", "ball", "box", "goal", "lava", "wall"})
# Types that stop "move forward" when straight ahead, as AgentGym counts them.
_BARRIER_TYPES = frozenset({"box", "wall"})


@dataclass(frozen=True)
class SeenObject:
    name: str
    """``"red ball"``, ``"grey wall"``, or ``"blue locked door"`` (doors carry their state)."""
    pos: Pos
    distance: int
    """Manhattan distance from the agent."""


@dataclass(frozen=True)
class Barrier:
    kind: str
    """``"wall"`` or ``"box"``."""
    pos: Pos
    ahead: int
    """Steps straight ahead of the agent."""


@dataclass(frozen=True)
class View:
    """The agent's view as AgentGym reads it, in world coordinates."""

    agent_pos: Pos
    agent_dir: int
    objects: list[SeenObject]
    """Visible named objects (walls included), nearest first; ties keep view order."""
    barriers: list[Barrier]
    """Walls and boxes on the agent's line of sight, nearest first."""
    xrange: range
    yrange: range
    """The cells path planning may use (AgentGym's bounds of the view square)."""
    carrying: tuple[str, str] | None
    """``(color, type)`` of the carried object."""

    @property
    def front_pos(self) -> Pos:
        dx, dy = DIR_TO_VEC[self.agent_dir]
        return (self.agent_pos[0] + int(dx), self.agent_pos[1] + int(dy))

    def forward_and_right(self, pos: Pos) -> tuple[int, int]:
        """Steps in front of and to the right of the agent (negative: behind, left)."""
        rel = (pos[0] - self.agent_pos[0], pos[1] - self.agent_pos[1])
        forward = DIR_TO_VEC[self.agent_dir]
        right = DIR_TO_VEC[(self.agent_dir + 1) % 4]
        return (
            int(forward[0] * rel[0] + forward[1] * rel[1]),
            int(right[0] * rel[0] + right[1] * rel[1]),
        )


def scan_view(env: Any) -> View:
    """Read the agent's partial view of a minigrid env (``env.unwrapped``)."""
    image = env.gen_obs()["image"]
    size = int(env.agent_view_size)
    pos = (int(env.agent_pos[0]), int(env.agent_pos[1]))
    direction = int(env.agent_dir)
    f_vec = np.asarray(env.dir_vec)
    r_vec = np.asarray(env.right_vec)
    # World position of the view's far-left cell; row 0 of the image is the farthest row.
    top_left = np.asarray(pos) + f_vec * (size - 1) - r_vec * (size // 2)
    xrange, yrange = _planning_ranges(top_left, f_vec, r_vec, size)

    objects: list[SeenObject] = []
    barriers: list[Barrier] = []
    for vis_j in range(size):
        for vis_i in range(size):
            abs_i, abs_j = (int(v) for v in top_left - f_vec * vis_j + r_vec * vis_i)
            distance = abs(pos[0] - abs_i) + abs(pos[1] - abs_j)
            if abs_i < 0 or abs_j < 0 or distance == 0:
                continue  # off the grid, or the agent's own cell (which shows what it carries)
            obj_type = IDX_TO_OBJECT[int(image[vis_i, vis_j, 0])]
            if obj_type not in _NAMED_TYPES:
                continue
            color = IDX_TO_COLOR[int(image[vis_i, vis_j, 1])]
            if obj_type == "door":
                name = f"{color} {IDX_TO_STATE[int(image[vis_i, vis_j, 2])]} door"
            else:
                name = f"{color} {obj_type}"
            objects.append(SeenObject(name=name, pos=(abs_i, abs_j), distance=distance))
            if obj_type in _BARRIER_TYPES:
                rel = (abs_i - pos[0], abs_j - pos[1])
                ahead_vec = DIR_TO_VEC[direction]
                if ahead_vec[0] * rel[1] - ahead_vec[1] * rel[0] == 0:  # on the line of sight
                    ahead = int(ahead_vec[0] * rel[0] + ahead_vec[1] * rel[1])
                    barriers.append(Barrier(kind=obj_type, pos=(abs_i, abs_j), ahead=ahead))
    objects.sort(key=lambda o: o.distance)  # stable: ties keep the view's scan order
    barriers.sort(key=lambda b: b.ahead)
    carried = env.carrying
    carrying = (str(carried.color), str(carried.type)) if carried is not None else None
    return View(pos, direction, objects, barriers, xrange, yrange, carrying)


def _planning_ranges(top_left: Any, f_vec: Any, r_vec: Any, size: int) -> tuple[range, range]:
    # AgentGym's bounds: one corner is the view's far-left cell, the other one step past the
    # view; where that corner lies below the first, the range also takes in the row behind
    # the agent. Reproduced as is, since it decides which paths a macro action may take.
    corner = top_left + size * (-f_vec + r_vec)
    ranges = []
    for axis in (0, 1):
        start, end = int(top_left[axis]), int(corner[axis])
        ranges.append(range(end, start + 1) if end < start else range(start, end))
    return ranges[0], ranges[1]


def describe(view: View) -> str:
    """The observation text for ``view``, word for word as AgentGym writes it."""
    if view.objects:
        parts = ["In front of you in this room, you can see several objects: "]
        seen: dict[str, int] = {}
        for obj in view.objects:
            if "wall" in obj.name:
                continue
            seen[obj.name] = seen.get(obj.name, 0) + 1
            parts.append(f"There is a {obj.name} {seen[obj.name]} {_where(view, obj.pos)} ")
        objects_text = "".join(parts)
    else:
        objects_text = "You cannot see any objects within sight."
    barrier_text = "The room has walls around you. "
    if view.barriers:
        nearest = view.barriers[0]
        barrier_text += f"You are facing a {nearest.kind} {nearest.ahead} steps away. "
    if view.carrying is not None:
        carry_text = f"You are carrying a {view.carrying[0]} {view.carrying[1]}."
    else:
        carry_text = "You are not carrying anything."
    return objects_text + barrier_text + carry_text


def _where(view: View, pos: Pos) -> str:
    forward, right = view.forward_and_right(pos)
    if right == 0:
        return f"right in front of you {forward} steps away. "
    side = "right" if right > 0 else "left"
    return f"{forward} steps in front of you and {abs(right)} steps to your {side}. "
