"""``webarena-oracle`` through a real ``agenthub serve env=webarena`` (Chromium, the built-in shop, over HTTP).

A sample of each split (one task of every oracle kind and answer reader), the same task files played
against a shop site named by ``env_kwargs.sites`` as a WebArena deployment is, and what the oracle reads
and refuses. The full splits are measured with ``agenthub eval`` (README.md).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from agenthub import AgenthubError, EnvClient, EnvInfo, LocalServer, Observation, Outcome, Task, play_episode

from agenthub_env_webarena.actions import extract_action
from agenthub_env_webarena.oracle import READERS, WebArenaOracle, element_id
from agenthub_env_webarena.shop.tasks import tasks_dir
from agenthub_env_webarena.task_config import WebArenaTask, load_tasks

INFO = EnvInfo(name="webarena", version="test", default_max_turns=30, splits=["train", "test"])


def sample(split: str, size: int = 6) -> list[WebArenaTask]:
    """The first task of each oracle kind and of each answer reader, then the split's first others: ``size``."""
    tasks = load_tasks(tasks_dir(split))
    picked: dict[str, WebArenaTask] = {}
    for task in tasks:
        oracle = task.raw["oracle"]
        picked.setdefault(oracle["kind"], task)
    for task in tasks:
        if len(picked) >= size:
            break
        picked.setdefault(f"read:{task.raw['oracle'].get('read')}", task)
    return sorted(picked.values(), key=lambda t: t.task_id)[:size]


@pytest.fixture(scope="module")
def served(chromium: None) -> Iterator[str]:
    """``agenthub serve env=webarena`` with nothing configured: the built-in tasks, a shop site per session."""
    with LocalServer("webarena", overrides={"max_sessions": 6}) as server:
        yield server.url


@pytest.mark.anyio
@pytest.mark.parametrize("split", ["train", "test"])
async def test_the_oracle_wins_a_sample_of_each_split_through_the_service(served: str, split: str) -> None:
    chosen = sample(split)
    assert {t.raw["oracle"]["kind"] for t in chosen} == {
        "answer",
        "navigate",
        "add_to_cart",
        "place_order",
        "update_account",
    }
    oracle = WebArenaOracle()
    async with EnvClient(served) as client:
        info = await client.info()
        played = await asyncio.gather(  # side by side, as a trainer's rollouts run
            *(
                play_episode(client, oracle, Task(env="webarena", task_id=t.task_id, split=split), env_info=info)
                for t in chosen
            )
        )
    for task, trajectory in zip(chosen, played, strict=True):
        assert trajectory.outcome == Outcome.SUCCESS, (task.task_id, task.intent, trajectory.error)
        assert trajectory.reward == 1.0
        # Every action is one of WebArena's in a fenced block (the env's default), aimed by the tree's ids (or a
        # goto of the block's page).
        actions = [extract_action(str(t.action)) for t in trajectory.turns]
        assert all(a.split(" [")[0] in ("goto", "type", "click", "stop") for a in actions), actions
        # real_urls is on by default: the built-in shop is WebArena's `shopping`, so its pages are shown (and
        # the oracle's goto is written) under WebArena's real-world name, mapped back by the env.
        assert "URL: http://onestopmarket.com\n" in trajectory.first_observation  # the start_url, the root
        assert any(a.startswith("goto [http://onestopmarket.com/") for a in actions), actions


@pytest.fixture(scope="module")
def deployment(chromium: None) -> Iterator[tuple[str, str]]:
    """A shop started on its own (as a WebArena site is), one site on it, and a server told its URL only."""
    from agenthub_env_webarena.shop import close_session_site, new_session_site, start_shop

    url, stop = start_shop(process=True)
    site = new_session_site(url)
    try:
        with LocalServer("webarena", overrides={"env_kwargs": {"sites": {"shopping": site}}}) as server:
            yield server.url, site
    finally:
        close_session_site(site)
        stop()


@pytest.mark.anyio
async def test_the_task_files_run_unchanged_on_a_site_named_by_the_sites_mapping(
    deployment: tuple[str, str],
) -> None:
    from agenthub_env_webarena.shop import shop_helpers

    server, site = deployment
    chosen = {t.raw["oracle"]["kind"]: t for t in load_tasks(tasks_dir("test"))}
    async with EnvClient(server) as client:
        for kind in ("answer", "add_to_cart"):
            task = chosen[kind]
            trajectory = await play_episode(client, WebArenaOracle(), Task(env="webarena", task_id=task.task_id))
            assert trajectory.outcome == Outcome.SUCCESS, (task.task_id, trajectory.error)
            # __SHOPPING__ became the mapped site, shown under WebArena's real-world name (real_urls' default)
            assert "URL: http://onestopmarket.com\n" in trajectory.first_observation  # the start_url, the root
            assert site not in trajectory.first_observation
    # The cart task's actions landed on that site: its own cart holds the product.
    product = chosen["add_to_cart"].raw["instantiation_dict"]["product"]
    assert product in shop_helpers(site)["shopping_get_cart_contents"]()


def test_the_readers_take_the_answer_off_the_tree() -> None:
    product = (
        "[42] heading 'Blue Mug'\n\t\t[47] StaticText 'Price: '\n\t\t[48] StaticText '$1,204.50'\n"
        "\t\t[50] StaticText 'Availability: Out of stock'\n\t\t[51] StaticText 'Rating: 4.2 (4 reviews)'\n"
        "\t\t[53] heading 'Reviews (4)'"
    )
    assert READERS["price"](product) == "$1,204.50"
    assert READERS["in_stock"](product) == "No"
    assert READERS["rating"](product) == "4.2"
    assert READERS["reviews"](product) == "4"
    listing = (
        "\t\t[45] StaticText '2 results for \"mug\"'\n\t\t[46] navigation 'Sort'\n\t\t\t[47] link 'Sort by Name'\n"
        "\t\t[55] link \"Tom's Mug\"\n\t\t[59] link 'Blue Mug'"
    )
    assert READERS["first_listed"](listing) == "Tom's Mug"  # a name with an apostrophe is double-quoted
    assert READERS["result_count"](listing) == "2"
    assert READERS["price"](listing) is None


def test_elements_are_found_by_role_and_name_and_a_missing_one_is_named() -> None:
    tree = "\t\t[55] combobox 'Color' hasPopup: menu\n\t\t[69] spinbutton 'Quantity' required: False\nURL: http://x/p"
    assert element_id(tree, "combobox", "Color") == 55
    assert element_id(tree, "spinbutton", "Quantity") == 69
    with pytest.raises(AgenthubError, match=r"no button named 'Add to Cart'.*page http://x/p"):
        element_id(tree, "button", "Add to Cart")


@pytest.mark.anyio
async def test_the_oracle_refuses_other_envs_unknown_tasks_and_stops_on_a_failed_action() -> None:
    oracle = WebArenaOracle()
    with pytest.raises(AgenthubError, match="only plays env 'webarena'"):
        oracle.start_episode(Task(env="guess", task_id=0), INFO.model_copy(update={"name": "guess"}))
    with pytest.raises(AgenthubError, match="no task 99999"):
        oracle.start_episode(Task(env="webarena", task_id=99999), INFO)
    task = next(t for t in load_tasks(tasks_dir("test")) if t.raw["oracle"]["kind"] == "add_to_cart")
    episode = oracle.start_episode(Task(env="webarena", task_id=task.task_id), INFO)
    first: Any = await episode.act(Observation(text="[1] RootWebArea 'Home'\nURL: http://127.0.0.1:9/s/abc/"))
    path = task.raw["oracle"]["path"]
    assert first.action == f"In summary, the next action I will perform is ```goto [http://127.0.0.1:9/s/abc{path}]```"
    with pytest.raises(AgenthubError, match="refused the oracle's action: THE PREVIOUS ACTION FAILED: no element"):
        await episode.act(Observation(text="THE PREVIOUS ACTION FAILED: no element [55]\nURL: http://127.0.0.1:9/"))
