"""AgentGym's BabyAI action set: text actions that expand to minigrid primitives.

Besides "turn left", "turn right" and "move forward", the set offers macro
actions over what is in view ("go to red ball 1", "pickup red ball 1",
"go through blue open door 1", "toggle and go through blue closed door 1",
"toggle", "drop", "go to goal") and "check available actions". A macro is
planned by breadth-first search over (cell, direction) inside the view, the
way AgentGym plans it, so an action name leads to the same moves here as there.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from minigrid.core.actions import Actions
from minigrid.core.constants import DIR_TO_VEC

from agenthub_env_babyai.describe import Pos, SeenObject, View

CHECK_ACTIONS = "check available actions"
LEFT, RIGHT, FORWARD = int(Actions.left), int(Actions.right), int(Actions.forward)
PICKUP, DROP, TOGGLE = int(Actions.pickup), int(Actions.drop), int(Actions.toggle)

# Objects a planned path must go around, matched by substring as AgentGym does.
_PATH_BLOCKERS = ("wall", "box", "lava", "ball", "key")
_DROP_BLOCKERS = ("wall", "box", "lava", "ball", "key")


@dataclass
class ActionSet:
    """The actions valid in one state, and why some tempting ones are not."""

    macros: dict[str, tuple[int, ...]] = field(default_factory=dict)
    """Action text -> minigrid primitives, in the order AgentGym lists them."""
    refusals: dict[str, str] = field(default_factory=dict)
    """Action text -> the message AgentGym answers when it is tried now."""

    @property
    def names(self) -> list[str]:
        return list(self.macros)


def plan_actions(view: View) -> ActionSet:
    """The action set for ``view``; every macro's primitives are planned here."""
    actions = ActionSet()
    macros, refusals = actions.macros, actions.refusals
    macros["turn left"] = (LEFT,)
    macros["turn right"] = (RIGHT,)
    if not view.barriers or view.barriers[0].ahead > 1:
        macros["move forward"] = (FORWARD,)
    else:
        refusals["move forward"] = "There is a barrier in front of you, you can't move forward."

    if view.carrying is None:
        _numbered(view, actions, "pickup", skip=("wall", "door", "goal"), last=(PICKUP,))

    if view.carrying is not None:
        front = view.front_pos
        blocked = any(o.pos == front and any(b in o.name for b in _DROP_BLOCKERS) for o in view.objects)
        if blocked:
            refusals["drop"] = "You cannot drop the object, as there is already an object in front of you."
        else:
            macros["drop"] = (DROP,)
    else:
        refusals["drop"] = "You cannot drop the object, as you are not carrying anything."

    _doors(view, actions)

    for obj in view.objects:
        if "goal" not in obj.name:
            continue
        path = find_path(view, obj.pos, arrive=True)
        if path is not None:
            macros["go to goal"] = path
        else:
            refusals["go to goal"] = "You cannot go to the goal, as there is no path leading to it."

    _numbered(view, actions, "go to", skip=("wall", "goal"), last=())
    macros[CHECK_ACTIONS] = ()
    return actions


def _numbered(view: View, actions: ActionSet, verb: str, *, skip: tuple[str, ...], last: tuple[int, ...]) -> None:
    # Objects of one name are numbered by distance, counting only those with a path, as in
    # AgentGym; an unreachable one gets a refusal under the next free number.
    count: dict[str, int] = {}
    for obj in view.objects:
        if any(s in obj.name for s in skip):
            continue
        path = find_path(view, obj.pos, arrive=False)
        first = f"{verb} {obj.name} 1"
        if path is not None:
            count[obj.name] = count.get(obj.name, 0) + 1 if first in actions.macros else 1
            actions.macros[f"{verb} {obj.name} {count[obj.name]}"] = (*path, *last)
        else:
            label = first if first not in actions.macros else f"{verb} {obj.name} {count[obj.name] + 1}"
            what = "go to" if verb == "go to" else "pickup"
            actions.refusals[label] = f"You cannot {what} {label[len(verb) + 1 :]}, as there is no path leading to it."


def _doors(view: View, actions: ActionSet) -> None:
    macros, refusals = actions.macros, actions.refusals
    count: dict[str, int] = {}
    for obj in view.objects:
        if "door" not in obj.name:
            continue
        count[obj.name] = count.get(obj.name, 0) + 1
        label = f"{obj.name} {count[obj.name]}"
        if "open door" in obj.name:
            path = find_path(view, obj.pos, arrive=True)
            if path is not None:
                macros[f"go through {label}"] = path
            else:
                refusals[f"go through {label}"] = f"You cannot go through {label}, as there is no path leading to it."
        elif "closed door" in obj.name:
            _toggle_through(view, actions, obj, label)
            refusals[f"go through {label}"] = (
                f"You cannot go through {label}, as it is closed. You should toggle it first."
            )
        elif "locked door" in obj.name:
            if view.carrying is None or view.carrying[1] != "key":
                refusals[f"toggle and go through {label}"] = (
                    f"You cannot toggle and go through {label}, as you are not carrying a key."
                )
            elif view.carrying[0] != obj.name.split(" ")[0]:
                refusals[f"toggle and go through {label}"] = (
                    f"You cannot toggle and go through {label}, "
                    "as the color of the key you are carrying does not match the color of door."
                )
            else:
                _toggle_through(view, actions, obj, label)


def _toggle_through(view: View, actions: ActionSet, door: SeenObject, label: str) -> None:
    path = find_path(view, door.pos, arrive=False)
    if path is not None:
        actions.macros[f"toggle and go through {label}"] = (*path, TOGGLE, FORWARD)
    else:
        actions.refusals[f"toggle and go through {label}"] = (
            f"You cannot toggle and go through {label}, as there is no path leading to it."
        )
    if path == ():
        actions.macros["toggle"] = (TOGGLE,)


def find_path(view: View, goal: Pos, *, arrive: bool) -> tuple[int, ...] | None:
    """Primitives that take the agent onto ``goal`` (``arrive``) or to face it, or None.

    Breadth-first over (cell, direction), trying forward, left, right in that order
    and staying inside the view's planning ranges. Cells not in view count as free,
    as in AgentGym; a macro that bumps into one stops where the move fails.
    """
    start = (view.agent_pos, view.agent_dir)
    parents: dict[tuple[Pos, int], tuple[tuple[Pos, int], int]] = {}
    blocked = {o.pos for o in view.objects if any(b in o.name for b in _PATH_BLOCKERS)}
    blocked |= {b.pos for b in view.barriers}
    queue: deque[tuple[Pos, int]] = deque([start])
    expanded: set[tuple[Pos, int]] = set()
    while queue:
        state = queue.popleft()
        expanded.add(state)
        pos, direction = state
        if arrive:
            done = pos == goal
        else:
            dx, dy = DIR_TO_VEC[direction]
            done = (goal[0] - pos[0], goal[1] - pos[1]) == (int(dx), int(dy))
        if done:
            path: list[int] = []
            while state != start:
                state, action = parents[state]
                path.append(action)
            return tuple(reversed(path))
        for action in (FORWARD, LEFT, RIGHT):
            nxt = _next_state(pos, direction, action)
            if nxt[0][0] not in view.xrange or nxt[0][1] not in view.yrange:
                continue
            if nxt in expanded or nxt[0] in blocked:
                continue
            queue.append(nxt)
            # A state queued twice keeps its latest parent, as AgentGym's dict does; the
            # path it rebuilds is then the one AgentGym executes.
            parents[nxt] = (state, action)
    return None


def _next_state(pos: Pos, direction: int, action: int) -> tuple[Pos, int]:
    if action == LEFT:
        return pos, (direction - 1) % 4
    if action == RIGHT:
        return pos, (direction + 1) % 4
    dx, dy = DIR_TO_VEC[direction]
    return (pos[0] + int(dx), pos[1] + int(dy)), direction
