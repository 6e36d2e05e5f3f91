"""``textcraft-oracle``: plans a whole episode from the crafting commands in the first observation.

It reads the task the way a player does, from the listed commands, and asks
the recipe book only what the rules say but the text does not: which names
are generic ingredients (``planks``) and which items ``get`` can fetch. The
plan fetches each base ingredient once, in the total amount needed, then
crafts bottom-up, reusing leftovers, so it stays within AgentGym's 30 turns.
"""

from __future__ import annotations

import math
import re
from collections import Counter

from agenthub import AgenthubError, AgentReply, EnvInfo, Observation, Task

from .recipes import Command, RecipeBook, item_id, item_name, recipe_book

_GOAL = re.compile(r"^Goal: craft (.+)\.$", re.MULTILINE)
_DONE = ("Got ", "Crafted ")


def parse_task(observation: str) -> tuple[str, list[Command]]:
    """The goal's item id and the crafting commands of a first observation."""
    head, _, _ = observation.partition("\n\nGoal:")
    goal = _GOAL.search(observation)
    if not head.startswith("Crafting commands:") or goal is None:
        raise AgenthubError(
            "the textcraft oracle needs the first observation of a textcraft episode "
            "('Crafting commands: ... Goal: craft X.'); got: " + observation[:120]
        )
    commands = [c for c in map(Command.parse, head.splitlines()[1:]) if c is not None]
    return item_id(goal.group(1)), commands


class _Planner:
    def __init__(self, book: RecipeBook, commands: list[Command]) -> None:
        self.book = book
        self.producers: dict[str, list[Command]] = {}
        for command in commands:
            self.producers.setdefault(command.output, []).append(command)
        self._costs: dict[str, float] = {}
        self.stock: Counter[str] = Counter()
        self.gets: dict[str, int] = {}
        self.crafts: list[str] = []

    def plan(self, goal: str) -> list[str]:
        self.acquire(goal, 1, ())
        return [f"get {count} {item_name(item)}" for item, count in self.gets.items()] + self.crafts

    def cost(self, item: str, path: tuple[str, ...] = ()) -> float:
        """Actions to make one batch of ``item`` from nothing (a ``get`` counts once); inf if impossible."""
        if item in self._costs:
            return self._costs[item]
        if self.book.is_gettable(item):
            return 1.0
        if item in path:
            return math.inf
        best = min((self._recipe_cost(c, (*path, item)) for c in self.producers.get(item, ())), default=math.inf)
        self._costs[item] = best
        return best

    def _recipe_cost(self, command: Command, path: tuple[str, ...]) -> float:
        return 1.0 + sum(self._ingredient_cost(item, path) for item, _ in command.inputs)

    def _ingredient_cost(self, item: str, path: tuple[str, ...]) -> float:
        if self.book.is_tag(item):
            return min((self.cost(m, path) for m in self.book.tag_members(item)), default=math.inf)
        return self.cost(item, path)

    def choose(self, ingredient: str, needed: int) -> str:
        """A concrete item for ``ingredient``: itself, or for a tag the held or cheapest member."""
        if not self.book.is_tag(ingredient):
            return ingredient
        members = [m for m in self.book.tag_members(ingredient) if self.cost(m) < math.inf]
        if not members:
            raise AgenthubError(f"no listed command or get makes any kind of {item_name(ingredient)}")
        return min(members, key=lambda m: (self.stock[m] < needed, self.cost(m), m))

    def acquire(self, item: str, needed: int, path: tuple[str, ...]) -> None:
        used = min(self.stock[item], needed)
        self.stock[item] -= used
        needed -= used
        if needed == 0:
            return
        if self.book.is_gettable(item):
            self.gets[item] = self.gets.get(item, 0) + needed
            return
        options = [c for c in self.producers.get(item, ()) if self._recipe_cost(c, (*path, item)) < math.inf]
        if item in path or not options:
            raise AgenthubError(f"no listed command makes {item_name(item)} and get cannot fetch it")
        command = min(options, key=lambda c: self._recipe_cost(c, (*path, item)))
        batches = -(-needed // command.count)
        concrete = []
        for ingredient, count in command.inputs:
            chosen = self.choose(ingredient, count * batches)
            self.acquire(chosen, count * batches, (*path, item))
            concrete.append((chosen, count))
        self.crafts.extend([command.render(concrete)] * batches)
        self.stock[item] += batches * command.count - needed


def plan_actions(observation: str, book: RecipeBook | None = None) -> list[str]:
    """Every action of a winning episode, from its first observation."""
    goal, commands = parse_task(observation)
    return _Planner(book or recipe_book(), commands).plan(goal)


class TextCraftOracleEpisode:
    """Plays the plan made from the first observation, one action per turn."""

    def __init__(self, book: RecipeBook) -> None:
        self._book = book
        self._plan: list[str] | None = None
        self._next = 0

    async def act(self, observation: Observation) -> AgentReply:
        if self._plan is None:
            self._plan = plan_actions(observation.text, self._book)
        elif not observation.text.startswith(_DONE):
            raise AgenthubError(
                f"textcraft refused the oracle's action {self._plan[self._next - 1]!r}: {observation.text!r}"
            )
        if self._next >= len(self._plan):
            raise AgenthubError("the oracle's plan is spent but the goal is not crafted; this is a bug in the oracle")
        action = self._plan[self._next]
        self._next += 1
        return AgentReply(action=action, text=action)


class TextCraftOracle:
    """Wins (nearly) every textcraft task; see ``README.md`` for its measured success rate."""

    def start_episode(self, task: Task, env: EnvInfo) -> TextCraftOracleEpisode:
        if env.name != "textcraft":
            raise AgenthubError(f"the textcraft oracle only plays env 'textcraft', not {env.name!r}")
        return TextCraftOracleEpisode(recipe_book())
