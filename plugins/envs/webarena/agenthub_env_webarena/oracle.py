"""``webarena-oracle``: plays the built-in shop's tasks through the accessibility tree, as a model would.

It reads the task's ``oracle`` block from the task file (as the search env's oracle reads its question
file: the env never hands it out). The block is a plan, not an answer: the page to open, the form fields to
fill and, for a question, *what* to read on the page (``read``), never the answer itself. Each action is
one of WebArena's id-based actions, aimed at an element found in the current observation by its role and
name (``combobox 'Color'``, ``spinbutton 'Quantity'``, ``button 'Place Order'``); each answer is read off
the tree. So a task the oracle wins is one a model could win from the same observations.

Its opening page is the task's ``start_url``, the site's root (``__SHOPPING__``), so the site's address
comes from the first observation: the oracle plays a site wherever it is served (the built-in shop, or a
site named by ``env_kwargs.sites``), under the name the URL line gives it: WebArena's real-world
``http://onestopmarket.com`` by default (the env maps its ``goto`` back), the deployment's URL with
``real_urls=false``. Each action is written as WebArena's prompt asks, in a ``` fenced block after "In
summary, the next action I will perform is", so it needs no ``bare_actions``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agenthub import AgenthubError, AgentReply, EnvInfo, Observation, Task

from agenthub_env_webarena.actions import fenced
from agenthub_env_webarena.task_config import WebArenaTask

Step = Callable[[str], str]
"""The next action, from the current observation's text."""

_URL = re.compile(r"^URL: (\S+)$", re.MULTILINE)
_FAILED = "THE PREVIOUS ACTION FAILED"
_STOP = "stop [done]"  # url_match and program_html tasks check the pages, not the answer


def _quoted(name: str) -> str:
    """``name`` as the tree prints it: in single quotes, or in double quotes when it holds one."""
    return f"(?:\"{re.escape(name)}\"|'{re.escape(name)}')"


def element_id(tree: str, role: str, name: str) -> int:
    """The id of the first element with this role and accessible name in an observation's tree."""
    match = re.search(rf"\[(\d+)\] {re.escape(role)} {_quoted(name)}", tree)
    if match is None:
        raise AgenthubError(
            f"the webarena oracle found no {role} named {name!r} on this page; the site's markup differs from "
            f"the built-in shop's, or an earlier action did not land: {_page_of(tree)}"
        )
    return int(match.group(1))


def _page_of(tree: str) -> str:
    url = _URL.search(tree)
    return f"page {url.group(1)}" if url else "no URL in the observation"


def _first(pattern: str, tree: str) -> str | None:
    match = re.search(pattern, tree)
    return match.group(1) if match else None


def _first_listed(tree: str) -> str | None:
    """The first product of a result or category list: the first link after the 'Sort' navigation."""
    _, found, rest = tree.partition("navigation 'Sort'")
    match = re.search(r"\n\t\t\[\d+\] link (?:'([^'\n]+)'|\"([^\"\n]+)\")", rest) if found else None
    return (match.group(1) or match.group(2)) if match else None


READERS: dict[str, Callable[[str], str | None]] = {
    "price": lambda t: _first(r"StaticText 'Price: '\n\t*\[\d+\] StaticText '(\$[\d,]+\.\d\d)'", t),
    "reviews": lambda t: _first(r"heading 'Reviews \((\d+)\)'", t),
    "rating": lambda t: _first(r"StaticText 'Rating: ([\d.]+) \(", t),
    "in_stock": lambda t: {"In stock": "Yes", "Out of stock": "No"}.get(
        _first(r"StaticText 'Availability: (In stock|Out of stock)", t) or ""
    ),
    "first_listed": _first_listed,
    "result_count": lambda t: _first(r"StaticText '(\d+) results? for ", t),
    "order_status": lambda t: _first(r"StaticText 'Status: ([^'\n]+)'", t),
    "order_total": lambda t: _first(r"StaticText 'Total: (\$[\d,]+\.\d\d)'", t),
}
"""What a question task asks for, read off the page that answers it (the ``read`` of its oracle block)."""


def _goto(path: str, base: list[str]) -> Step:
    return lambda tree: f"goto [{base[0]}{path}]"


def _type(role: str, name: str, text: str, enter: bool = True) -> Step:
    # WebArena's type: click, type, Enter. A select takes the typed option name; Enter in a field submits.
    return lambda tree: f"type [{element_id(tree, role, name)}] [{text}] [{int(enter)}]"


def _click(role: str, name: str) -> Step:
    return lambda tree: f"click [{element_id(tree, role, name)}]"


def _answer(read: str) -> Step:
    reader = READERS.get(read)
    if reader is None:
        raise AgenthubError(f"the oracle block asks to read {read!r}; the oracle reads {', '.join(READERS)}")

    def step(tree: str) -> str:
        value = reader(tree)
        if value is None:
            raise AgenthubError(f"the webarena oracle found no {read} on {_page_of(tree)}")
        return f"stop [{value}]"

    return step


def plan(oracle: dict[str, Any], base: list[str]) -> list[Step]:
    """The steps that carry out an ``oracle`` block (see :mod:`.shop.tasks`); ``base[0]`` is the site's URL."""
    kind = oracle.get("kind")
    if kind == "answer":
        return [_goto(oracle["path"], base), _answer(oracle["read"])]
    if kind == "navigate":
        return [_goto(oracle["path"], base), lambda tree: _STOP]
    if kind in ("add_to_cart", "place_order"):
        steps = [_goto(oracle["path"], base)]
        steps += [_type("combobox", name, value) for name, value in oracle["options"].items()]
        steps.append(_type("spinbutton", "Quantity", str(oracle["qty"])))  # Enter adds to the cart
        if kind == "place_order":
            steps += [
                _click("link", "Proceed to Checkout"),
                _type("combobox", "Shipping method", oracle["shipping"]),
                _click("button", "Place Order"),
            ]
        return [*steps, lambda tree: _STOP]
    if kind == "update_account":
        # Each Enter saves the form; a blank field keeps its value, so one field at a time is exact.
        steps = [_goto(oracle["path"], base)]
        steps += [_type("textbox", label, value) for label, value in oracle["fields"].items()]
        return [*steps, lambda tree: _STOP]
    raise AgenthubError(
        f"the webarena oracle cannot carry out an oracle block of kind {kind!r}; it knows answer, navigate, "
        "add_to_cart, place_order and update_account (the built-in task set's)"
    )


class WebArenaOracleEpisode:
    """Plays one task's plan, one action per turn, each aimed by the observation it answers."""

    def __init__(self, oracle: dict[str, Any]) -> None:
        self._base: list[str] = [""]
        self._steps = plan(oracle, self._base)
        self._next = 0

    async def act(self, observation: Observation) -> AgentReply:
        tree = observation.text
        if self._next == 0:
            start = _URL.search(tree)
            if start is None:
                raise AgenthubError("the webarena oracle needs a webarena observation (with its 'URL: ...' line)")
            self._base[0] = start.group(1).rstrip("/")  # the start_url: the site's root
        elif _FAILED in tree:
            failed = tree[tree.index(_FAILED) :].splitlines()[0]
            raise AgenthubError(f"webarena refused the oracle's action: {failed}")
        if self._next >= len(self._steps):
            raise AgenthubError("the webarena oracle's plan is spent but the episode goes on; this is a bug in it")
        action = self._steps[self._next](tree)
        self._next += 1
        reply = f"In summary, the next action I will perform is {fenced(action)}"  # WebArena's answer phrase
        return AgentReply(action=reply, text=reply)


class WebArenaOracle:
    """Wins the built-in task set through the accessibility tree; ``README.md`` has its measured success.

    Args:
        tasks: the task folder the env serves (as ``env_kwargs.tasks``); default ``$AGENTHUB_WEBARENA_TASKS``,
            else the built-in set. Its configs must carry ``oracle`` blocks.
    """

    def __init__(self, tasks: str | None = None) -> None:
        from agenthub_env_webarena.env import cached_splits, resolve_tasks_dir  # reads no task until used

        self._folder: Path = resolve_tasks_dir(tasks)
        self._load = cached_splits

    def _task(self, task_id: Any) -> WebArenaTask:
        for tasks in self._load(self._folder).values():
            for task in tasks:
                if task.task_id == task_id:
                    return task
        raise AgenthubError(f"the webarena oracle found no task {task_id!r} in {self._folder}; pass agent.tasks=DIR")

    def start_episode(self, task: Task, env: EnvInfo) -> WebArenaOracleEpisode:
        if env.name != "webarena":
            raise AgenthubError(f"the webarena oracle only plays env 'webarena', not {env.name!r}")
        if task.task_id is None:
            raise AgenthubError("the webarena oracle needs a task id (it reads that task's oracle block)")
        config = self._task(task.task_id)
        oracle = config.raw.get("oracle")
        if not isinstance(oracle, dict):
            raise AgenthubError(
                f"task {task.task_id} in {self._folder} has no 'oracle' block; the oracle plays the built-in "
                "task set (or configs written like it, see README.md)"
            )
        return WebArenaOracleEpisode(oracle)
