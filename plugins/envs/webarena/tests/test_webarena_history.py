"""run.py's ways around each action, in the real env: PREVIOUS ACTION, early stops that are still scored, URL names.

A real Chromium against pages served on loopback (the ``site`` fixture); the rules themselves are compared with
WebArena's code in test_webarena_reference.py.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agenthub_env_webarena.actions import fenced

PAGES = {
    "index.html": "<!doctype html><html><head><title>Start</title></head><body><h1>Start</h1>"
    '<a href="item.html">Item</a> <input aria-label="Search"></body></html>',
    "item.html": "<!doctype html><html><head><title>Item</title></head><body><h1>The item</h1></body></html>",
}


def write_tasks(folder: Path) -> Path:
    task = {
        "task_id": 7,
        "sites": ["shopping"],
        "start_url": "__SHOPPING__/history/index.html",
        "intent": "Open the item.",
        "require_login": False,
        "storage_state": None,
        "eval": {"eval_types": ["url_match"], "reference_url": "__SHOPPING__/history/item.html"},
    }
    (folder / "7.json").write_text(json.dumps(task), encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def env(chromium: None, site: tuple[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from agenthub_env_webarena.env import WebArenaEnv

    url, root = site
    (root / "history").mkdir(exist_ok=True)
    for name, text in PAGES.items():
        (root / "history" / name).write_text(text, encoding="utf-8")
    tasks = write_tasks(tmp_path_factory.mktemp("history-tasks"))
    instance = WebArenaEnv(tasks=str(tasks), sites={"shopping": url}, max_steps=3)
    yield instance
    instance.close()


def element(observation: str, role: str, name: str) -> int:
    match = re.search(rf"\[(\d+)\] {re.escape(role)} {re.escape(repr(name))}", observation)
    assert match, f"no {role} {name!r} in:\n{observation}"
    return int(match.group(1))


def test_previous_action_is_webarena_s_description_of_it(env: Any) -> None:
    observation, _ = env.reset(task_id=7)
    search = element(observation, "textbox", "Search")
    observation, *_ = env.step(f"I type. ```type [{search}] [mug] [0]``` and ```click [1]```")  # the first block
    assert f"PREVIOUS ACTION: type [{search}] [mug] where [{search}] is textbox 'Search'" in observation
    observation, *_ = env.step(fenced("click [99999]"))
    assert 'Attempt to perfom "click" on element "[99999]" but no matching element found.' in observation


def test_an_episode_at_the_step_limit_is_still_scored(env: Any) -> None:
    observation, _ = env.reset(task_id=7)
    observation, *_ = env.step(fenced(f"click [{element(observation, 'link', 'Item')}]"))
    env.step(fenced("scroll [down]"))
    text, reward, terminated, truncated, info = env.step(fenced("scroll [up]"))
    # run.py: stop with "Early stop: Reach max steps 3" and evaluate: the URL matches, so it passes.
    assert (reward, terminated, truncated) == (1.0, False, True) and info["won"] is True
    assert info["early_stop"] == "Reach max steps 3" and "step limit (3)" in text


def test_three_identical_actions_or_three_unparsable_replies_stop_the_episode(env: Any) -> None:
    env.max_steps = 10  # run.py checks the step limit first
    try:
        env.reset(task_id=7)
        env.step(fenced("scroll [down]"))
        env.step(fenced("scroll [down]"))
        _, reward, terminated, truncated, info = env.step(fenced("scroll [down]"))
        assert (reward, terminated, truncated) == (0.0, True, False)
        assert info["early_stop"] == "Same action for 3 times" and info["won"] is False
        # A reply with no ``` block is a parse failure, as in WebArena: a bare action counts like any other.
        env.reset(task_id=7)
        for reply in ("click [1]", "I am not sure"):
            observation, _, terminated, _, info = env.step(reply)
            assert not terminated and "no action in a pair of ```" in info["error"]
            assert 'PREVIOUS ACTION: The previous prediction you issued was "' in observation
        _, _, terminated, _, info = env.step("scroll [down]")
        assert terminated and info["early_stop"] == "Failed to parse actions for 3 times"
    finally:
        env.max_steps = 3


def test_bare_actions_reads_a_reply_without_a_block_whole(env: Any) -> None:
    env.bare_actions = True  # the option (off by default): a reply with no ``` block is the action
    try:
        observation, _ = env.reset(task_id=7)
        observation, _, terminated, _, info = env.step(f"click [{element(observation, 'link', 'Item')}]")
        assert not terminated and "invalid_action" not in info and "The item" in observation
        observation, *_ = env.step("I am not sure")  # still a parse failure: no such action
        assert 'PREVIOUS ACTION: The previous prediction you issued was "I am not sure"' in observation
    finally:
        env.bare_actions = False


def test_real_urls_show_webarena_s_host_names_and_map_actions_back(env: Any, site: tuple[str, Path]) -> None:
    assert env.real_urls is True  # the default: the site is WebArena's `shopping`, shown as its real-world name
    observation, _ = env.reset(task_id=7)
    assert "URL: http://onestopmarket.com/history/index.html\n" in observation and site[0] not in observation
    observation, *_ = env.step(fenced("goto [http://onestopmarket.com/history/item.html]"))
    assert "URL: http://onestopmarket.com/history/item.html\n" in observation and "The item" in observation
    assert "PREVIOUS ACTION: goto [" in observation and "/history/item.html]" in observation


def test_real_urls_off_shows_the_deployment_s_urls(env: Any, site: tuple[str, Path]) -> None:
    env.real_urls = False  # the option's old behaviour: the URL the agent can visit, no mapping either way
    try:
        observation, _ = env.reset(task_id=7)
        assert f"URL: {site[0]}/history/index.html\n" in observation and "onestopmarket" not in observation
        observation, *_ = env.step(fenced(f"goto [{site[0]}/history/item.html]"))
        assert f"URL: {site[0]}/history/item.html\n" in observation and "The item" in observation
        observation, _, _, _, info = env.step(fenced("goto [http://onestopmarket.com/history/index.html]"))
        assert "was refused" in info["error"]  # not mapped back: another host
    finally:
        env.real_urls = True
