"""The ``webarena`` env on a real Chromium, against a small site served on loopback and WebArena configs on disk.

First in-process, then through the hub: a real ``agenthub serve`` process and the conformance checker (one server
for the module, as a browser launch costs seconds; the test that kills it runs last).
"""

from __future__ import annotations

import json
import os
import re
import signal
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
from agenthub import AgentReply, LocalServer
from agenthub.testing import check_env

from agenthub_env_webarena.accessibility import IdMap, clean, render, truncate
from agenthub_env_webarena.actions import fenced
from agenthub_env_webarena.env import TASKS_ENV_VAR

PAGES = {
    "index.html": """<!doctype html><html><head><title>Test Shop</title></head><body>
<h1>Test Shop</h1>
<nav><a href="products.html">Products</a> <a href="help.html" target="_blank">Help in a new tab</a></nav>
<form action="products.html" method="get"><label for="q">Search</label><input id="q" name="q">
<button type="submit">Go</button></form>
<p>Welcome to the shop.</p></body></html>""",
    "products.html": """<!doctype html><html><head><title>Products</title></head><body>
<h1>Products</h1><p id="query"></p>
<ul><li><a href="item-blue-mug.html">Blue Mug</a> $12</li>
<li><a href="item-red-kettle.html">Red Kettle</a> $30</li></ul>
<button onclick="add('Blue Mug')">Add Blue Mug to cart</button>
<button onclick="add('Red Kettle')">Add Red Kettle to cart</button>
<div id="cart">Cart: </div>
<div style="height: 3000px">tall</div><p>Bottom of the page</p>
<script>
const q = new URLSearchParams(location.search).get('q');
if (q) document.getElementById('query').textContent = 'Results for ' + q;
function show() { document.getElementById('cart').textContent = 'Cart: ' + (localStorage.getItem('cart') || ''); }
function add(item) { localStorage.setItem('cart', (localStorage.getItem('cart') || '') + item + ';'); show(); }
show();
</script></body></html>""",
    "item-blue-mug.html": """<!doctype html><html><head><title>Blue Mug</title></head><body>
<h1>Blue Mug</h1><p>Price: $12</p><a href="products.html">Back to products</a></body></html>""",
    "item-red-kettle.html": """<!doctype html><html><head><title>Red Kettle</title></head><body>
<h1>Red Kettle</h1><p>Price: $30</p><a href="products.html">Back to products</a></body></html>""",
    "help.html": """<!doctype html><html><head><title>Help</title></head><body><h1>Help</h1>
<p>Ask at the counter.</p></body></html>""",
}

TASKS: list[dict[str, Any]] = [
    {
        "task_id": 1,
        "sites": ["shopping"],
        "start_url": "__SHOPPING__/index.html",
        "intent": "What is the price of the Red Kettle?",
        "require_login": False,
        "storage_state": None,
        "eval": {"eval_types": ["string_match"], "reference_answers": {"must_include": ["30"]}},
    },
    {
        "task_id": 2,
        "sites": ["shopping"],
        "start_url": "__SHOPPING__/index.html",
        "intent": "Open the page of the Blue Mug.",
        "require_login": False,
        "storage_state": None,
        "eval": {
            "eval_types": ["url_match"],
            "reference_url": "__SHOPPING__/item-blue-mug.html",
            "url_note": "GOLD in PRED",
        },
    },
    {
        "task_id": 3,
        "sites": ["shopping"],
        "start_url": "__SHOPPING__/index.html",
        "intent": "Put the Blue Mug in the cart.",
        "require_login": False,
        "storage_state": None,
        "eval": {
            "eval_types": ["program_html"],
            "program_html": [
                {
                    "url": "__SHOPPING__/products.html",
                    "locator": "document.querySelector('#cart').textContent",
                    "required_contents": {"must_include": ["Blue Mug"]},
                }
            ],
        },
    },
    {
        "task_id": 4,
        "sites": ["shopping"],
        "start_url": "__SHOPPING__/index.html",
        "intent": "Describe the shop's help page.",
        "require_login": True,
        "storage_state": "./.auth/shopping_state.json",
        "eval": {"eval_types": ["string_match"], "reference_answers": {"fuzzy_match": ["ask at the counter"]}},
    },
]


REAL_SHOP = "http://onestopmarket.com"
"""The test site is the tasks' ``shopping``: with ``real_urls`` (on by default) its URL line shows WebArena's name."""


def write_site(root: Path) -> None:
    for name, text in PAGES.items():
        (root / name).write_text(text, encoding="utf-8")


def write_tasks(folder: Path, split: str | None = None) -> Path:
    target = folder / split if split else folder
    target.mkdir(parents=True, exist_ok=True)
    for task in TASKS:
        (target / f"{task['task_id']}.json").write_text(json.dumps(task), encoding="utf-8")
    return folder


def element(observation: str, role: str, name: str) -> int:
    """The id of the element shown as ``[id] role 'name'`` (what a model reads off the tree)."""
    match = re.search(rf"\[(\d+)\] {re.escape(role)} {re.escape(repr(name))}", observation)
    assert match, f"no {role} {name!r} in:\n{observation}"
    return int(match.group(1))


@pytest.fixture(scope="module")
def tasks_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tasks(tmp_path_factory.mktemp("tasks"))


@pytest.fixture(scope="module")
def shop(site: tuple[str, Path]) -> str:
    url, root = site
    write_site(root)
    return url


@pytest.fixture(scope="module")
def env(chromium: None, shop: str, tasks_dir: Path) -> Iterator[Any]:
    from agenthub_env_webarena.env import WebArenaEnv

    instance = WebArenaEnv(tasks=str(tasks_dir), sites={"shopping": shop})
    yield instance
    instance.close()


def test_the_first_observation_is_webarena_s_format(env: Any, shop: str) -> None:
    observation, info = env.reset(task_id=1)
    assert observation.startswith("OBSERVATION:\nTab 0 (current): Test Shop\n\n[")
    assert re.search(r"^\[\d+\] RootWebArea 'Test Shop' focused: True$", observation, re.MULTILINE)
    assert re.search(r"^\t+\[\d+\] link 'Products'$", observation, re.MULTILINE)
    assert re.search(r"^\t+\[\d+\] textbox 'Search'", observation, re.MULTILINE)
    assert observation.endswith(
        f"URL: {REAL_SHOP}/index.html\nOBJECTIVE: What is the price of the Red Kettle?\nPREVIOUS ACTION: None"
    )
    assert info["task_id"] == 1 and info["url"] == f"{shop}/index.html"
    again, _ = env.reset(task_id=1)
    assert again == observation  # the same task shows the same tree, ids included


def test_a_string_match_episode_through_tree_ids(env: Any) -> None:
    observation, _ = env.reset(task_id=1)
    observation, reward, terminated, _, info = env.step(fenced(f"click [{element(observation, 'link', 'Products')}]"))
    assert not terminated and "URL: " in observation and "/products.html" in observation
    kettle = element(observation, "link", "Red Kettle")
    observation, *_ = env.step(f"Let me look. In summary, the next action I will perform is ```click [{kettle}]```")
    assert "heading 'Red Kettle'" in observation and "Price: $30" in observation
    _, reward, terminated, truncated, info = env.step(fenced("stop [$30]"))
    assert (reward, terminated, truncated, info["won"], info["score"]) == (1.0, True, False, True, 1.0)
    env.reset(task_id=1)
    assert env.step(fenced("stop [12]"))[1:3] == (0.0, True)


def test_url_match_and_typing_with_enter(env: Any, shop: str) -> None:
    observation, _ = env.reset(task_id=2)
    observation, *_ = env.step(fenced(f"type [{element(observation, 'textbox', 'Search')}] [mug] [1]"))
    assert f"URL: {REAL_SHOP}/products.html?q=mug" in observation and "Results for mug" in observation
    observation, *_ = env.step(fenced(f"click [{element(observation, 'link', 'Blue Mug')}]"))
    _, reward, _, _, info = env.step(fenced("stop"))
    assert reward == 1.0 and info["won"] is True


def test_program_html_checks_the_state_the_actions_left(env: Any) -> None:
    observation, _ = env.reset(task_id=3)
    observation, *_ = env.step(fenced(f"click [{element(observation, 'link', 'Products')}]"))
    observation, *_ = env.step(fenced(f"click [{element(observation, 'button', 'Add Blue Mug to cart')}]"))
    assert "Cart: Blue Mug;" in observation
    assert env.step(fenced("stop"))[1] == 1.0
    # A fresh context per reset: the cart of the last episode is gone.
    observation, _ = env.reset(task_id=3)
    observation, *_ = env.step(fenced(f"click [{element(observation, 'link', 'Products')}]"))
    observation, *_ = env.step(fenced(f"click [{element(observation, 'button', 'Add Red Kettle to cart')}]"))
    _, reward, _, _, info = env.step(fenced("stop"))
    assert reward == 0.0 and info["won"] is False


def test_fuzzy_match_without_a_judge_is_not_evaluated(env: Any) -> None:
    _, info = env.reset(task_id=4)
    assert "starts logged out" in info["notes"][0]  # WebArena's .auth file is absent here
    text, reward, terminated, _, info = env.step(fenced("stop [ask at the counter]"))
    assert terminated and reward == 0.0 and "won" not in info and info["score"] is None
    assert "needs an LLM judge" in info["not_evaluated"][0] and "could not be evaluated" in text


def test_tabs_history_hover_scroll_press_and_goto(env: Any, shop: str) -> None:
    observation, _ = env.reset(task_id=1)
    observation, *_ = env.step(fenced(f"click [{element(observation, 'link', 'Help in a new tab')}]"))
    assert "Tab 0: Test Shop | Tab 1 (current): Help" in observation and f"URL: {REAL_SHOP}/help.html" in observation
    observation, *_ = env.step(fenced("tab_focus [0]"))
    assert "Tab 0 (current): Test Shop | Tab 1: Help" in observation
    observation, *_ = env.step(fenced("close_tab"))
    assert observation.startswith("OBSERVATION:\nTab 0 (current): Help\n")
    observation, *_ = env.step(fenced("new_tab"))
    assert "Tab 1 (current): " in observation and "URL: about:blank" in observation
    observation, *_ = env.step(fenced(f"goto [{shop}/products.html]"))
    assert f"URL: {REAL_SHOP}/products.html" in observation
    observation, *_ = env.step(fenced(f"hover [{element(observation, 'link', 'Blue Mug')}]"))
    assert "THE PREVIOUS ACTION FAILED" not in observation
    for action in ("scroll [down]", "scroll [up]", "press [Control+a]"):
        observation, _, _, _, info = env.step(fenced(action))
        assert "invalid_action" not in info, info
    observation, *_ = env.step(fenced(f"click [{element(observation, 'link', 'Red Kettle')}]"))
    observation, *_ = env.step(fenced("go_back"))
    assert f"URL: {REAL_SHOP}/products.html" in observation
    observation, *_ = env.step(fenced("go_forward"))
    assert f"URL: {REAL_SHOP}/item-red-kettle.html" in observation


@pytest.mark.parametrize(
    ("action", "says"),
    [
        ("jump [3]", "'jump' is not an action"),
        ("click [99999]", "there is no element [99999] on this page"),
        ("tab_focus [7]", "there is no tab 7"),
        ("go_forward", "there is no page to go forward to"),
        ("press [NoSuchKey]", "press failed"),
        ("goto [http://127.0.0.1:9/]", "was refused: it is not one of the task's sites"),
    ],
)
def test_bad_actions_are_answered_in_words(env: Any, action: str, says: str) -> None:
    env.reset(task_id=1)
    observation, reward, terminated, truncated, info = env.step(fenced(action))
    assert says in observation and says in info["error"] and info["invalid_action"] is True
    assert (reward, terminated, truncated) == (0.0, False, False)


def test_the_step_limit_truncates(chromium: None, shop: str, tasks_dir: Path) -> None:
    from agenthub_env_webarena.env import WebArenaEnv

    env = WebArenaEnv(tasks=str(tasks_dir), sites={"shopping": shop}, max_steps=2)
    try:
        env.reset(task_id=1)
        assert env.step(fenced("scroll [down]"))[2:4] == (False, False)
        observation, _, terminated, truncated, _ = env.step(fenced("scroll [down]"))
        assert (terminated, truncated) == (False, True) and "step limit (2)" in observation
    finally:
        env.close()


def test_settings_errors_name_the_setting(tmp_path: Path, tasks_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from agenthub_env_webarena import env as env_module
    from agenthub_env_webarena.env import TASKS_ENV_VAR, WebArenaEnv, load_splits
    from agenthub_env_webarena.task_config import TaskConfigError

    monkeypatch.delenv(TASKS_ENV_VAR, raising=False)
    monkeypatch.setattr(env_module, "BUILTIN_TASKS", tmp_path / "no-built-in-tasks")
    monkeypatch.delenv("SHOPPING", raising=False)
    with pytest.raises(TaskConfigError, match=r"set env_kwargs\.tasks=DIR"):
        WebArenaEnv()
    reddit = tmp_path / "reddit"
    reddit.mkdir()
    (reddit / "7.json").write_text(json.dumps({**TASKS[0], "task_id": 7, "start_url": "__REDDIT__/f/books"}))
    with pytest.raises(TaskConfigError, match=r"env_kwargs\.sites\.reddit=URL"):
        WebArenaEnv(tasks=str(reddit)).reset(task_id=7)
    env = WebArenaEnv(tasks=str(tasks_dir))
    with pytest.raises(ValueError, match="unknown webarena task 99"):
        env.reset(task_id=99)
    write_tasks(tmp_path, "train")
    assert list(load_splits(tmp_path)) == ["train"]
    assert [t.task_id for t in load_splits(tasks_dir)["test"]] == [1, 2, 3, 4]


def test_built_in_tasks_run_on_a_shop_site_of_their_own(chromium: None, monkeypatch: pytest.MonkeyPatch) -> None:
    from agenthub_env_webarena.env import WebArenaEnv

    monkeypatch.delenv(TASKS_ENV_VAR, raising=False)
    monkeypatch.delenv("SHOPPING", raising=False)
    first, second = WebArenaEnv(), WebArenaEnv()  # no tasks, no sites: the built-in set on the built-in shop
    try:
        task = next(t for t in first.splits["test"] if t.eval_types == ("url_match",))
        _, info = first.reset(task_id=task.task_id)
        _, other = second.reset(task_id=task.task_id)
        assert re.search(r"/s/\w+", info["url"]) and info["url"] != other["url"]  # a site per session
        target = task.eval["reference_url"].replace("__SHOPPING__", info["url"].rstrip("/"))
        first.step(fenced(f"goto [{target}]"))
        assert first.step(fenced("stop"))[1] == 1.0
    finally:
        first.close()
        second.close()


def test_closed_sessions_leave_no_browser_context_and_no_shop_site(
    chromium: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What must not leak, counted where it lives: the browser's contexts and the shop's session databases."""
    from agenthub_env_webarena.browser import BrowserHost
    from agenthub_env_webarena.env import WebArenaEnv, builtin_shop_url

    monkeypatch.delenv(TASKS_ENV_VAR, raising=False)
    monkeypatch.delenv("SHOPPING", raising=False)

    def shop_sessions() -> int:
        return int(httpx.get(f"{builtin_shop_url()}/_health", timeout=30).json()["sessions"])

    host = BrowserHost()  # this test's own browser: its contexts are this test's sessions only
    try:
        task_id = WebArenaEnv(host=host).splits["test"][0].task_id
        before = shop_sessions()
        for _ in range(12):
            env = WebArenaEnv(host=host)
            env.reset(task_id=task_id)
            env.reset(task_id=task_id)  # a reset replaces the context and resets the same shop site
            assert host.open_contexts() == 1
            assert shop_sessions() == before + 1
            env.close()
            assert host.open_contexts() == 0
            assert shop_sessions() == before
        assert host.launches == 1
    finally:
        host.shutdown()


def test_the_tree_follows_webarena_s_pruning() -> None:
    def node(i: str, role: str, name: str = "", children: tuple[str, ...] = (), **extra: Any) -> dict[str, Any]:
        return {"nodeId": i, "role": {"value": role}, "name": {"value": name}, "childIds": list(children),
                "backendDOMNodeId": int(i) + 100, **extra}  # fmt: skip

    nodes = [
        node("1", "RootWebArea", "Shop", ("2", "5"), properties=[{"name": "focused", "value": {"value": True}}]),
        node("2", "generic", "", ("3",)),  # empty generic: left out, its child moves up
        node("3", "link", "Add to Cart", ("4",), properties=[{"name": "focusable", "value": {"value": True}}]),
        node("4", "StaticText", "Add to Cart"),
        node("5", "heading", "Mug", properties=[{"name": "level", "value": {"value": 1}}]),
        node("5", "heading", "repeated node id"),
    ]
    ids = IdMap()
    tree, shown = render(nodes, ids)
    assert tree == (
        "[1] RootWebArea 'Shop' focused: True\n\t[2] link 'Add to Cart'\n\t\t[3] StaticText 'Add to Cart'\n"
        "\t[4] heading 'Mug'"
    )
    assert shown == {1, 2, 3, 4} and ids.backend_of[2] == 103
    # A StaticText repeating a line above goes; one the pattern cannot read ("it's") stays.
    cleaned = clean(tree + "\n\t[5] StaticText 'Mug'\n\t[6] StaticText \"it's\"")
    kept = "[1] RootWebArea 'Shop' focused: True\n\t[2] link 'Add to Cart'\n\t[4] heading 'Mug'"
    assert cleaned == kept + '\n\t[6] StaticText "it\'s"'
    assert truncate("a\nb\nc", 3) == "a\n[... the page is longer; 4 more characters not shown]"


# -- through the hub ---------------------------------------------------------------------------------


def descendants(pid: int) -> set[int]:
    """Every process under ``pid`` (from /proc: no dependency for a process table)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            parents[int(entry.name)] = int(fields[1])
    found: set[int] = set()
    frontier = [pid]
    while frontier:
        parent = frontier.pop()
        children = [p for p, pp in parents.items() if pp == parent]
        found.update(children)
        frontier.extend(children)
    return found


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def rss_mb(pids: set[int]) -> float:
    total = 0
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return total / 1024


def browser_main(server_pid: int) -> int:
    """The Chromium browser process (not a renderer or helper) under the server."""
    mains = [p for p in descendants(server_pid) if "chrom" in cmdline(p) and "--type=" not in cmdline(p)]
    assert len(mains) == 1, [cmdline(p)[:80] for p in mains]
    return mains[0]


@pytest.fixture(scope="module")
def server(chromium: None, site: tuple[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    url, root = site
    write_site(root)
    tasks = write_tasks(tmp_path_factory.mktemp("service-tasks"))
    env_kwargs = {"tasks": str(tasks), "sites": {"shopping": url}, "max_steps": 6}
    # The splits come from $AGENTHUB_WEBARENA_TASKS (a server lists them before any env is built).
    with LocalServer(
        "webarena", overrides={"env_kwargs": env_kwargs, "max_sessions": 12}, extra_env={TASKS_ENV_VAR: str(tasks)}
    ) as local:
        yield local


@pytest.fixture(scope="module")
def http(server: LocalServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=120) as client:
        yield client


def create(http: httpx.Client, task_id: int) -> dict[str, Any]:
    answer = http.post("/v1/sessions", json={"task_id": task_id})
    assert answer.status_code == 201, answer.text
    return dict(answer.json())


def step(http: httpx.Client, session: str, action: str) -> httpx.Response:
    """One reply, the action fenced as WebArena's prompt asks (the env's default)."""
    return http.post(f"/v1/sessions/{session}/step", json={"action": fenced(action)})


def test_info_and_splits_come_from_the_task_folder(http: httpx.Client) -> None:
    info = http.get("/v1/info").json()
    assert info["name"] == "webarena" and info["splits"] == ["test"]
    assert info["instructions"].startswith("You are an autonomous intelligent agent tasked with navigating")
    assert http.get("/v1/tasks", params={"split": "test"}).json()["ids"] == [1, 2, 3, 4]


def test_an_episode_through_the_service(http: httpx.Client) -> None:
    session = create(http, 2)
    sid = session["session_id"]
    answer = step(http, sid, "jump [3]")  # a bad action is answered in words, not as an error
    assert answer.status_code == 200 and "'jump' is not an action" in answer.json()["observation"]
    observation = step(http, sid, f"click [{element(session['observation'], 'link', 'Products')}]").json()
    observation = step(http, sid, f"click [{element(observation['observation'], 'link', 'Blue Mug')}]").json()
    final = step(http, sid, "stop").json()
    assert final["reward"] == 1.0 and final["terminated"] and final["info"]["won"] is True
    assert http.delete(f"/v1/sessions/{sid}").status_code == 204


def test_the_env_server_itself_is_out_of_the_browser_s_reach(http: httpx.Client, server: LocalServer) -> None:
    def created() -> float:
        return float(re.search(r"^agenthub_sessions_created_total (\S+)", http.get("/metrics").text, re.M).group(1))  # type: ignore[union-attr]

    sid = create(http, 1)["session_id"]
    before = created()
    for url in (f"{server.url}/healthz", f"{server.url}/v1/sessions"):
        answer = step(http, sid, f"goto [{url}]")
        assert answer.status_code == 200, answer.text
        assert "was refused: it is not one of the task's sites" in answer.json()["observation"]
    assert created() == before  # no page created a session through /v1/sessions
    assert http.delete(f"/v1/sessions/{sid}").status_code == 204


class Says:
    """A scripted agent: the given actions in turn, as a model's replies."""

    def __init__(self, *actions: str) -> None:
        self.actions = actions

    def start_episode(self, task: Any, env: Any) -> Says:
        self.left = list(self.actions)
        return self

    async def act(self, observation: Any) -> AgentReply:
        return AgentReply(action=fenced(self.left.pop(0)))


def test_an_episode_with_no_judge_for_fuzzy_match_is_neither_won_nor_lost(server: LocalServer) -> None:
    """The hub records it as env_error with the env's reason: not a failure in eval, not trained on, not retried."""
    import asyncio

    from agenthub import Outcome, Task
    from agenthub.rollout import EnvPool, EpisodeRequest, Executor

    async def play() -> Any:
        async with EnvPool.from_urls([server.url]) as pool:
            executor = Executor(pool, Says("stop [ask at the counter]"), max_attempts=3)
            return await executor.run_one(EpisodeRequest("0/0", Task(env="webarena", task_id=4)))

    trajectory = asyncio.run(play())
    assert trajectory.outcome is Outcome.ENV_ERROR and not trajectory.trainable
    assert trajectory.error is not None and "could not score this episode" in trajectory.error
    assert "fuzzy_match" in trajectory.error and len(trajectory.turns) == 1  # one attempt: a retry cannot help


def test_the_conformance_checker_passes(server: LocalServer) -> None:
    # In a thread of its own: the checker runs its own event loop, and Playwright's sync API (the evaluator
    # tests' browser) may hold one in this thread.
    with ThreadPoolExecutor(1) as pool:
        report = pool.submit(check_env, url=server.url, sessions=2).result()
    assert report.passed, report.summary()


def renderers(server_pid: int) -> set[int]:
    return {p for p in descendants(server_pid) if "--type=renderer" in cmdline(p)}


def test_a_crashed_page_fails_its_session_only(http: httpx.Client, server: LocalServer) -> None:
    other = create(http, 3)["session_id"]
    assert step(http, other, "scroll [down]").status_code == 200
    before = renderers(server.pid)
    crashed = create(http, 1)["session_id"]
    # chrome://crash is refused now (containment): crash the new context's renderers from outside instead.
    # A context never shares a renderer with another, so the older ones are the other session's.
    fresh = renderers(server.pid) - before
    assert fresh
    for pid in fresh:
        os.kill(pid, signal.SIGKILL)
    answer = step(http, crashed, "scroll [down]")
    assert answer.status_code == 500 and answer.json()["error"]["code"] == "env_error"
    assert "browser of this session died" in answer.json()["error"]["message"]
    again = step(http, crashed, "scroll [down]")
    assert again.status_code == 409 and again.json()["error"]["code"] == "session_failed"
    assert step(http, other, "scroll [down]").status_code == 200  # the other session's page is untouched
    for sid in (crashed, other):
        http.delete(f"/v1/sessions/{sid}")


def test_a_killed_browser_fails_the_session_and_the_next_one_relaunches_it(
    http: httpx.Client, server: LocalServer
) -> None:
    sid = create(http, 1)["session_id"]
    os.kill(browser_main(server.pid), signal.SIGKILL)
    answer = step(http, sid, "scroll [down]")
    assert answer.status_code == 500 and answer.json()["error"]["code"] == "env_error", answer.text
    http.delete(f"/v1/sessions/{sid}")
    assert server.alive() and http.get("/healthz").status_code == 200
    fresh = create(http, 1)
    assert "RootWebArea 'Test Shop'" in fresh["observation"]
    assert step(http, fresh["session_id"], "scroll [down]").status_code == 200
    http.delete(f"/v1/sessions/{fresh['session_id']}")


def test_contexts_do_not_leak_over_create_close_cycles(http: httpx.Client, server: LocalServer) -> None:
    def cycle() -> None:
        sid = create(http, 1)["session_id"]
        assert http.delete(f"/v1/sessions/{sid}").status_code == 204

    for _ in range(3):  # warm up: the browser's own caches and pools
        cycle()
    before_procs, before_mb = len(descendants(server.pid)), rss_mb(descendants(server.pid) | {server.pid})
    for _ in range(10):
        cycle()
    time.sleep(0.5)  # closed renderers take a moment to exit
    after_procs, after_mb = len(descendants(server.pid)), rss_mb(descendants(server.pid) | {server.pid})
    assert after_procs <= before_procs + 1, (before_procs, after_procs)
    assert after_mb < before_mb + 60, json.dumps({"before_mb": before_mb, "after_mb": after_mb})


def test_the_browser_dies_with_a_killed_server(http: httpx.Client, server: LocalServer) -> None:
    create(http, 1)  # a live session: a browser with a context and a renderer
    children = descendants(server.pid)
    assert any("chrom" in cmdline(p) for p in children)
    server.kill()  # SIGKILL: the server runs no cleanup
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and any(Path(f"/proc/{p}").exists() and cmdline(p) for p in children):
        time.sleep(0.1)
    left = [cmdline(p)[:80] for p in children if Path(f"/proc/{p}").exists() and cmdline(p)]
    assert not left, left


def test_a_busy_root_means_the_document_is_still_loading() -> None:
    """CDP marks the root of a document still being built busy; the env reads the tree again until it is not."""
    from agenthub_env_webarena.env import _busy

    root = {"role": {"type": "internalRole", "value": "RootWebArea"}, "properties": []}
    busy = {**root, "properties": [{"name": "busy", "value": {"type": "boolean", "value": True}}]}
    assert _busy([busy, {"role": {"value": "link"}}])
    assert not _busy([root, {"role": {"value": "link"}}])
    assert not _busy([{"role": {"value": "link"}}])
