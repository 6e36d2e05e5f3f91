"""The describer and the action set, on a grid laid out by hand."""

from __future__ import annotations

from typing import Any

import pytest
from minigrid.core import world_object
from minigrid.core.grid import Grid

from agenthub_env_babyai.actions import FORWARD, LEFT, PICKUP, RIGHT, TOGGLE, plan_actions
from agenthub_env_babyai.describe import describe, scan_view
from agenthub_env_babyai.env import make_level
from agenthub_env_babyai.levels import level_of

# minigrid's world objects are untyped classes.
Ball: Any = world_object.Ball
Box: Any = world_object.Box
Door: Any = world_object.Door
Key: Any = world_object.Key


@pytest.fixture
def room() -> Any:
    """An empty 9x9 walled room, agent at (4, 7) facing up (north)."""
    env = make_level(level_of(0))  # any level: its grid is replaced below
    env.grid = Grid(9, 9)
    env.grid.wall_rect(0, 0, 9, 9)
    env.agent_pos = (4, 7)
    env.agent_dir = 3  # up
    env.carrying = None
    return env


def test_describes_objects_relative_to_the_agent(room: Any) -> None:
    room.agent_pos = (4, 6)  # the north wall is 6 steps ahead, the last row of the 7x7 view
    room.grid.set(4, 4, Ball("blue"))  # 2 straight ahead: nearest
    room.grid.set(2, 5, Key("red"))  # 1 forward, 2 left: distance 3
    room.grid.set(5, 4, Key("red"))  # 2 forward, 1 right: distance 3, in a farther row, so listed first
    text = describe(scan_view(room))
    assert text == (
        "In front of you in this room, you can see several objects: "
        "There is a blue ball 1 right in front of you 2 steps away.  "
        "There is a red key 1 2 steps in front of you and 1 steps to your right.  "
        "There is a red key 2 1 steps in front of you and 2 steps to your left.  "
        "The room has walls around you. You are facing a wall 6 steps away. You are not carrying anything."
    )


def test_describes_doors_with_their_state_and_what_is_carried(room: Any) -> None:
    room.grid.set(4, 5, Door("yellow", is_locked=True))
    room.carrying = Key("yellow")
    view = scan_view(room)
    text = describe(view)
    assert "There is a yellow locked door 1 right in front of you 2 steps away." in text
    assert text.endswith("You are carrying a yellow key.")
    actions = plan_actions(view)
    assert actions.macros["toggle and go through yellow locked door 1"] == (FORWARD, TOGGLE, FORWARD)
    assert "pickup yellow locked door 1" not in actions.macros  # carrying, and doors cannot be picked up
    assert "drop" in actions.macros


def test_barrier_blocks_moving_forward(room: Any) -> None:
    room.grid.set(4, 6, Box("green"))
    view = scan_view(room)
    assert "You are facing a box 1 steps away." in describe(view)
    actions = plan_actions(view)
    assert "move forward" not in actions.macros
    assert actions.refusals["move forward"] == "There is a barrier in front of you, you can't move forward."
    assert actions.macros["pickup green box 1"] == (PICKUP,)  # already facing it


def test_macro_paths_turn_then_walk(room: Any) -> None:
    room.grid.set(2, 7, Ball("purple"))  # 2 cells to the agent's left, same row
    actions = plan_actions(scan_view(room))
    # Face west, walk one cell, then the ball is straight ahead.
    assert actions.macros["go to purple ball 1"] == (LEFT, FORWARD)
    assert actions.macros["pickup purple ball 1"] == (LEFT, FORWARD, PICKUP)
    assert actions.macros["turn right"] == (RIGHT,)
    assert actions.names[-1] == "check available actions"


def test_nothing_in_view(room: Any) -> None:
    room.agent_pos = (4, 1)  # facing the north wall, one step away
    text = describe(scan_view(room))
    assert text.startswith("In front of you in this room, you can see several objects: The room has walls around you.")
    assert "You are facing a wall 1 steps away." in text
