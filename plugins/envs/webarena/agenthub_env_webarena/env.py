"""``webarena``: WebArena tasks in a real browser, seen as WebArena's agents see them.

Each reset opens a fresh, isolated browser context (no cookies, no storage
from earlier episodes) on the task's ``start_url`` with its site placeholders
filled in. The observation is WebArena's: the open tabs, the page's
accessibility tree with element ids (:mod:`.accessibility`), the URL, the
objective and the previous action. Actions are WebArena's id-based action
space (:mod:`.actions`). ``stop [answer]`` ends the episode and scores it with
WebArena's evaluators on the final page: reward 1.0 or 0.0, ``info["won"]``;
a check that could not run (no judge for ``fuzzy_match``) leaves ``won`` out,
lists the reasons in ``info["not_evaluated"]`` and pays 0; the hub records that
episode as ``env_error`` (neither won nor lost: not counted, not trained on).
WebArena's early stops (the step limit, repeated or unparsable actions; :mod:`.history`) end the episode
scored likewise, with the answer ``Early stop: <reason>``, as its run.py scores them.

By default the env is WebArena's: a reply must hold its action in a ``` fenced block (else it is a parse
failure), and the URL line shows WebArena's real-world host names (``http://onestopmarket.com/...``),
mapped back in actions. ``bare_actions=True`` reads a reply with no fenced block whole; ``real_urls=False``
shows the deployment's URLs.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import json
import os
import re
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from agenthub import Action, TaskId, TaskSplit, begin_reset

from agenthub_env_webarena.accessibility import IdMap, clean, render, truncate
from agenthub_env_webarena.actions import ActionParseError, BrowserAction, parse_action, playwright_key
from agenthub_env_webarena.browser import BrowserCrashed, BrowserHost, shared_host
from agenthub_env_webarena.containment import BLANK, SitePolicy, contained_context, escaped, redact, site_of
from agenthub_env_webarena.evaluators import Helper, Verdict, evaluate
from agenthub_env_webarena.faults import agent_fault
from agenthub_env_webarena.history import (
    PARSING_FAILURE_TH,
    REPEATING_ACTION_TH,
    UrlMapper,
    describe,
    early_stop,
    node_line,
)
from agenthub_env_webarena.judge import OpenAIJudge
from agenthub_env_webarena.task_config import TaskConfigError, WebArenaTask, fill_task, load_tasks, site_urls

StepTuple = tuple[str, float, bool, bool, dict[str, Any]]

TASKS_ENV_VAR = "AGENTHUB_WEBARENA_TASKS"
"""A folder of WebArena configs, used when ``env_kwargs.tasks`` is not set (and for the server's splits)."""

BUILTIN_TASKS = Path(__file__).parent / "data" / "tasks"
"""Where the built-in task set lives once it ships (train/ and test/ folders of configs)."""

WEBARENA_TASK_COUNT = 812
"""WebArena's own config_files are task ids 0 to 811: the split a server shows when it knows no folder."""

DEFAULT_MAX_STEPS = 30
"""WebArena's ``max_steps``."""

_BOX_JS = """function () {
  const el = this.nodeType === 1 ? this : this.parentElement;
  if (!el) return null;
  el.scrollIntoView({block: 'center', inline: 'center'});
  let r;
  if (this.nodeType === 3) { const range = document.createRange(); range.selectNodeContents(this);
    r = range.getBoundingClientRect(); } else { r = el.getBoundingClientRect(); }
  const link = el.closest('a[target], area[target]');
  const opensTab = !!link && !['', '_self', '_parent', '_top'].includes(link.getAttribute('target'));
  return [r.x, r.y, r.width, r.height, opensTab];
}"""


_SHOP_SESSION = re.compile(r"^https?://[^/]+/s/[^/]+/?$")
_shop: tuple[str, Callable[[], None]] | None = None
_shop_lock = threading.Lock()


def _busy(nodes: list[dict[str, Any]]) -> bool:
    """Whether CDP's tree is of a document still loading (its root web area marked busy)."""
    for node in nodes:
        if node.get("role", {}).get("value") == "RootWebArea":
            return any(p.get("name") == "busy" and p.get("value", {}).get("value") for p in node.get("properties", []))
    return False


def builtin_shop_url() -> str:
    """The built-in shop of this server process, started on first use in a child process that dies with it."""
    global _shop
    with _shop_lock:
        if _shop is None:
            from agenthub_env_webarena.shop import start_shop

            # A process of its own: the site must not share the env server's GIL. It dies with this process
            # even on kill -9; at a clean exit it is stopped here.
            _shop = start_shop(process=True)
            atexit.register(_shop[1])
        return _shop[0]


def resolve_tasks_dir(tasks: str | os.PathLike[str] | None) -> Path:
    """The task folder: ``tasks``, else ``$AGENTHUB_WEBARENA_TASKS``, else the built-in set; an error if none."""
    chosen = tasks or os.environ.get(TASKS_ENV_VAR)
    if chosen:
        return Path(chosen)
    if any(BUILTIN_TASKS.glob("*.json")) or any(BUILTIN_TASKS.glob("*/*.json")):
        return BUILTIN_TASKS
    raise TaskConfigError(
        "no WebArena task folder: set env_kwargs.tasks=DIR (a folder of WebArena config_files/*.json, flat or with "
        f"train/ and test/ subfolders) or the environment variable {TASKS_ENV_VAR}"
    )


def load_splits(directory: Path) -> dict[str, list[WebArenaTask]]:
    """A folder's tasks by split: its ``train/`` and ``test/`` subfolders if it has them, else all in "test"."""
    subfolders = [name for name in ("train", "test") if (directory / name).is_dir()]
    if subfolders:
        splits = {name: load_tasks(directory / name) for name in subfolders}
        seen: dict[int, str] = {}
        for name, tasks in splits.items():
            for task in tasks:
                if task.task_id in seen:
                    raise TaskConfigError(f"task_id {task.task_id} is in both {seen[task.task_id]}/ and {name}/")
                seen[task.task_id] = name
        return splits
    return {"test": load_tasks(directory)}


_loaded: dict[str, tuple[tuple[float, ...], dict[str, list[WebArenaTask]]]] = {}
_loaded_lock = threading.Lock()


def cached_splits(directory: Path) -> dict[str, list[WebArenaTask]]:
    """:func:`load_splits`, read once per server while the folders are unchanged (each session builds an env)."""
    folders = [directory, *(directory / name for name in ("train", "test") if (directory / name).is_dir())]
    stamp = tuple(folder.stat().st_mtime for folder in folders)
    key = str(directory.resolve())
    with _loaded_lock:
        hit = _loaded.get(key)
        if hit is None or hit[0] != stamp:
            hit = (stamp, load_splits(directory))
            _loaded[key] = hit
        return hit[1]


def task_splits() -> dict[str, TaskSplit]:
    """The server's splits: from ``$AGENTHUB_WEBARENA_TASKS`` or the built-in set, else WebArena's 812 ids."""
    try:
        directory = resolve_tasks_dir(None)
    except TaskConfigError:
        return {"test": TaskSplit.range(0, WEBARENA_TASK_COUNT)}
    return {name: TaskSplit.of([t.task_id for t in tasks]) for name, tasks in load_splits(directory).items()}


class _Tab:
    """A page and the element ids it has shown."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.ids = IdMap()
        self.shown: set[int] = set()
        self.pending_navigations = 0
        self.crashed = False
        page.on("crash", self._on_crash)
        page.on("framenavigated", self._on_navigated)
        page.on("request", self._on_request)
        page.on("load", self._on_load)
        page.on("requestfailed", self._on_failed)

    def _on_crash(self, _: Any) -> None:
        self.crashed = True

    def _on_navigated(self, frame: Any) -> None:
        if frame == self.page.main_frame:  # a new document: its nodes are new, so are their ids
            self.ids = IdMap()

    def _on_request(self, request: Any) -> None:
        if request.is_navigation_request() and request.frame == self.page.main_frame:
            self.pending_navigations += 1

    def _on_load(self, _: Any) -> None:
        self.pending_navigations = 0

    def _on_failed(self, request: Any) -> None:
        if request.is_navigation_request() and request.frame == self.page.main_frame:
            self.pending_navigations = max(0, self.pending_navigations - 1)


class WebArenaEnv:
    """WebArena tasks in Chromium through Playwright; one isolated browser context per episode.

    Args:
        tasks: a folder of WebArena config files (flat: split "test"; or ``train/`` and ``test/``).
        sites: base URL of each WebArena site the tasks use, e.g. ``{"shopping": "http://host:7770"}``;
            WebArena's environment variables (``SHOPPING``, ...) fill in the rest.
        judge: ``fuzzy_match``'s LLM judge: ``{"base_url": ..., "model": ..., "api_key": ...}``.
        max_obs_chars: the accessibility tree is cut to this many characters.
        max_steps: steps after which the episode is truncated (WebArena's 30).
        auth_dir: where ``require_login`` tasks' ``storage_state`` files are looked up (default: the task folder).
        viewport_width, viewport_height: the browser window, WebArena's 1280x720.
        action_timeout_s: the longest one action (or a page load) may take before it is answered as failed.
        parsing_failure, repeating_action: run.py's early-stop thresholds (3 and 3); the episode then ends
            and is scored with the answer "Early stop: ...", as run.py scores it (the step limit too).
        real_urls: show the page URL with WebArena's real-world host names and map them back in actions
            (its URL_MAPPINGS), as WebArena's prompt constructor does (default); False shows the
            deployment's URLs. Only sites with a WebArena name are mapped (the built-in shop is ``shopping``).
        bare_actions: read a reply with no ``` fenced block whole as the action; off by default, where such
            a reply is a parse failure, as in WebArena (it counts toward the ``parsing_failure`` early stop).
    """

    def __init__(
        self,
        *,
        tasks: str | None = None,
        sites: Mapping[str, str] | None = None,
        judge: Mapping[str, Any] | None = None,
        max_obs_chars: int = 16_000,
        max_steps: int = DEFAULT_MAX_STEPS,
        auth_dir: str | None = None,
        viewport_width: int = 1280,
        viewport_height: int = 720,
        action_timeout_s: float = 30.0,
        host: BrowserHost | None = None,
        parsing_failure: int = PARSING_FAILURE_TH,
        repeating_action: int = REPEATING_ACTION_TH,
        real_urls: bool = True,
        bare_actions: bool = False,
    ) -> None:
        if max_obs_chars < 200:
            raise ValueError(f"max_obs_chars must be at least 200, got {max_obs_chars}")
        if max_steps < 1:
            raise ValueError(f"max_steps must be at least 1, got {max_steps}")
        self.tasks_dir = resolve_tasks_dir(tasks)
        self.splits = cached_splits(self.tasks_dir)
        self.tasks: dict[int, WebArenaTask] = {t.task_id: t for ts in self.splits.values() for t in ts}
        self.urls = site_urls(sites)
        self.judge = OpenAIJudge.from_settings(dict(judge) if judge else None)
        self.max_obs_chars = max_obs_chars
        self.max_steps = max_steps
        self.auth_dir = Path(auth_dir) if auth_dir else self.tasks_dir
        self.viewport = {"width": viewport_width, "height": viewport_height}
        self.action_timeout_s = action_timeout_s
        self.host = host or shared_host()
        self._context: Any = None
        self._context_closed = False
        self._tabs: list[_Tab] = []
        self._current = 0
        self._task: WebArenaTask | None = None
        self._steps = 0
        self._done = False
        self._notes: list[str] = []
        self.parsing_failure, self.repeating_action, self.real_urls = parsing_failure, repeating_action, real_urls
        self.bare_actions = bare_actions
        self._actions: list[BrowserAction | None] = []  # this episode's, None for a reply that did not parse
        self._tree = ""  # the last observation's accessibility tree, for PREVIOUS ACTION's element description
        self._mapper = UrlMapper({})
        self._shop_site: str | None = None
        """This session's own site on the built-in shop (fresh state per reset), when no shopping URL is set."""
        self._policy = SitePolicy(())
        self._refused: list[str] = []  # main-frame loads the browser refused since the last observation
        self._observed_error = ""  # what the last observation said went wrong (refusals included)
        self._proxy: Any = None  # the context's PolicyProxy
        self._blocked: list[tuple[str, str]] = []  # the last loads refused in any frame: (url, reason)

    # -- the protocol ---------------------------------------------------------------------

    def reset(
        self, *, task_id: TaskId | None = None, seed: int | None = None, options: Mapping[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        start = begin_reset("webarena", task_id=task_id, seed=seed, options=options, train=sorted(self.tasks))
        task_id = start.task_id
        if isinstance(task_id, bool) or not isinstance(task_id, int) or task_id not in self.tasks:
            known = sorted(self.tasks)
            raise ValueError(
                f"unknown webarena task {task_id!r}: {self.tasks_dir} holds {len(known)} tasks, ids "
                f"{known[0]} to {known[-1]}"
            )
        urls = self._site_urls(self.tasks[task_id])
        task = fill_task(self.tasks[task_id], urls)  # a missing site is refused
        self._close_context()
        self._task, self._steps, self._done, self._notes = task, 0, False, []
        self._actions, self._tree = [], ""
        self._mapper = UrlMapper(urls if self.real_urls else {})
        self._run(self._open(task))
        return self._observation(""), self._info()

    def step(self, action: Action) -> StepTuple:
        if self._task is None:
            raise RuntimeError("step() called before reset()")
        self._steps += 1
        text = action if isinstance(action, str) else json.dumps(action)
        error = ""
        try:
            parsed = parse_action(text, rewrite=self._mapper.to_local, bare=self.bare_actions)
        except ActionParseError as exc:
            parsed, error = None, str(exc)
        if parsed is not None and parsed.kind == "stop":
            return self._stop(parsed)
        element = parsed.element_id if parsed is not None else None
        previous = describe(parsed, text, node_line(self._tree, element) if element is not None else None)
        self._actions.append(parsed)
        if parsed is not None:
            error = self._with_refusals(self._run(self._execute(parsed)))
        # run.py's early stop: the episode is still scored, with the answer "Early stop: <reason>".
        reason = early_stop(self._actions, self.max_steps, self.parsing_failure, self.repeating_action)
        if reason:
            ended, reward, _, _, info = self._stop(BrowserAction("stop", text=f"Early stop: {reason}"))
            info.update(early_stop=reason, **({"invalid_action": True, "error": error} if error else {}))
            at_limit = len(self._actions) >= self.max_steps
            why = f"The step limit ({self.max_steps}) is reached" if at_limit else f"WebArena's early stop: {reason}"
            text = f"{why}; it is scored as the answer 'Early stop: {reason}'. {ended}"
            return text, reward, not at_limit, at_limit, info
        observation = self._observation(previous, error)
        info = self._info()
        error = self._observed_error  # with the loads the browser refused while the page settled
        if error:
            info.update(invalid_action=True, error=error)
        return observation, 0.0, False, False, info

    def close(self) -> None:
        self._close_context()
        self._task = None
        site, self._shop_site = self._shop_site, None
        if site is not None:
            from agenthub_env_webarena.shop import close_session_site

            with contextlib.suppress(Exception):  # the shop is gone with the server: nothing to free
                close_session_site(site)

    # -- sites ----------------------------------------------------------------------------------

    def _site_urls(self, task: WebArenaTask) -> dict[str, str]:
        """The sites' URLs; ``shopping``, when not configured, is this session's site on the built-in shop."""
        if "shopping" in self.urls or "__SHOPPING__" not in json.dumps(task.raw):
            return self.urls
        from agenthub_env_webarena.shop import new_session_site, reset_session_site

        if self._shop_site is None:
            self._shop_site = new_session_site(builtin_shop_url())
        else:
            reset_session_site(self._shop_site)  # copy-on-reset: the template state again
        return {**self.urls, "shopping": self._shop_site.rstrip("/")}

    def _helpers(self) -> dict[str, Helper]:
        """The ``func:`` helpers of the shop the task runs on, when it is the built-in shop."""
        site = self._shop_site or self.urls.get("shopping", "")
        if not _SHOP_SESSION.match(site):
            return {}
        from agenthub_env_webarena.shop import shop_helpers

        return shop_helpers(site)

    # -- the browser side -------------------------------------------------------------------

    def _run(self, coro: Any) -> Any:
        try:
            return self.host.run(self._guarded(coro), timeout_s=self.action_timeout_s * 2 + 10)
        except BrowserCrashed:
            raise
        except Exception as exc:
            if self._dead():
                raise BrowserCrashed(
                    f"the browser of this session died ({type(exc).__name__}: {exc}); create a new session"
                ) from exc
            raise

    async def _guarded(self, coro: Any) -> Any:
        """``coro``, cut short when the session's page, context or browser dies (a crashed page never answers)."""
        work = asyncio.ensure_future(coro)
        while True:
            done, _ = await asyncio.wait({work}, timeout=0.05)
            if done:
                return work.result()
            if self._dead():
                work.cancel()
                raise BrowserCrashed(
                    "the browser of this session died (its page crashed or was closed); create a new session"
                )

    def _dead(self) -> bool:
        if self._context is None:
            return False
        return self._context_closed or not self.host.connected() or any(t.crashed for t in self._tabs)

    def _close_context(self) -> None:
        context, self._context, self._tabs = self._context, None, []
        proxy, self._proxy = self._proxy, None
        if context is None:
            return

        async def close() -> None:
            with contextlib.suppress(Exception):  # the browser is gone already: nothing left to close
                await context.close()
            if proxy is not None:
                await proxy.close()

        with contextlib.suppress(Exception):  # closing must not fail a session that is ending anyway
            self.host.run(close(), timeout_s=30)

    async def _open(self, task: WebArenaTask) -> None:
        options: dict[str, Any] = {"viewport": self.viewport}
        # As WebArena: a config's storage_state (its .auth/*.json cookies) logs the context in; require_login
        # alone does nothing (the built-in shop needs no login).
        state = task.raw.get("storage_state")
        if state:
            path = Path(str(state)) if Path(str(state)).is_absolute() else self.auth_dir / str(state)
            if path.is_file():
                options["storage_state"] = str(path)
            else:
                self._notes.append(
                    f"task {task.task_id} names storage_state {state!r} but {path} does not exist; it starts "
                    "logged out. Put WebArena's .auth files under env_kwargs.auth_dir (generate them with "
                    "WebArena's browser_env/auto_login.py)"
                )
        self._context_closed = False
        self._policy = self._task_policy()
        if self._policy.refusal(task.start_url):
            raise TaskConfigError(
                redact(
                    f"task {task.task_id}: its start_url {task.start_url} is on none of the configured sites "
                    f"({self._policy.describe()}); set env_kwargs.sites.NAME=URL for its site"
                )
            )
        self._refused, self._blocked = [], []
        # Containment (containment.py): the context's requests pass the task's site policy, in the browser.
        self._context, self._proxy = await contained_context(self.host, self._policy, self._on_refused, **options)
        if self.host.sandbox_note:  # loud: every episode says its browser has no sandbox
            self._notes.append(self.host.sandbox_note)
        self._context.set_default_timeout(self.action_timeout_s * 1000)
        self._context.on("close", self._on_context_close)
        self._context.on("page", self._on_page)
        page = await self._context.new_page()
        self._current = self._index_of(page)
        await self._goto(page, task.start_url)

    def _on_context_close(self, _: Any) -> None:
        self._context_closed = True

    def _task_policy(self) -> SitePolicy:
        """The task's sites: every configured site by origin; a built-in shop session by origin and path."""
        urls = [*self.urls.values(), *([self._shop_site] if self._shop_site else [])]
        return SitePolicy(site_of(url, whole_origin=not _SHOP_SESSION.match(url)) for url in urls)

    def _on_refused(self, url: str, reason: str, main_frame: bool) -> None:
        if main_frame and len(self._refused) < 5:
            self._refused.append(f"{url} was refused: {reason}")
        self._blocked = [*self._blocked[-4:], (url, reason)]

    def _refusal_of(self, url: str, reason: str) -> str:
        """What to tell the model about a page left on ``url``: the refused load behind an error page."""
        if url.startswith("chrome-error:") and self._blocked:
            url, reason = self._blocked[-1]
        return f"{url} was refused: {reason}"

    async def _leave(self, page: Any) -> None:
        """Back to the page before the refused one (a redirect's error page is a history entry), else blank."""
        with contextlib.suppress(Exception):  # no page to go back to
            await page.go_back(wait_until="load", timeout=5000)
        if escaped(page.url, self._policy):
            with contextlib.suppress(Exception):  # a page that cannot even go blank is not shown (_snapshot)
                await page.goto(BLANK)

    def _with_refusals(self, error: str) -> str:
        """``error`` with the page loads the browser refused meanwhile (a blocked load is the only news)."""
        refused, self._refused = self._refused, []
        if not refused:
            return error
        if "ERR_BLOCKED_BY_CLIENT" in error:
            error = ""
        return "; ".join([*([error] if error else []), *refused])

    def _on_page(self, page: Any) -> None:
        # Pages the site opens (target=_blank, window.open) become tabs, focused as WebArena focuses them.
        if all(t.page is not page for t in self._tabs):
            self._tabs.append(_Tab(page))
            self._current = len(self._tabs) - 1

    def _index_of(self, page: Any) -> int:
        for i, tab in enumerate(self._tabs):
            if tab.page is page:
                return i
        self._tabs.append(_Tab(page))
        return len(self._tabs) - 1

    @property
    def _tab(self) -> _Tab:
        return self._tabs[self._current]

    async def _goto(self, page: Any, url: str) -> str:
        # A second layer: schemes that never reach the browser's routing (javascript:, chrome:, data:) are
        # refused here; the routing refuses every other URL off the task's sites on its own.
        refusal = self._policy.refusal(url)
        if refusal:
            return f"goto [{url}] was refused: {refusal}"
        try:
            await page.goto(url, wait_until="load")
        except Exception as exc:
            if self._dead():
                raise
            return f"the page {url!r} could not be opened ({_first_line(exc)}); check the URL"
        return ""

    async def _settle(self, tab: _Tab, before: int, tabs_before: int, opens_tab: bool = False) -> None:
        """Wait for what the action started (a navigation, a new tab) to load; nothing within 100 ms means nothing.

        A click on a link that opens a tab waits for that tab (a busy machine may take longer than 100 ms).
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + (self.action_timeout_s if opens_tab else 0.1)
        # Polled, not awaited on an Event: Playwright's event handlers bump plain counters.
        while tab.pending_navigations <= before and len(self._tabs) <= tabs_before and loop.time() < deadline:  # noqa: ASYNC110
            await asyncio.sleep(0.01)
        if len(self._tabs) > tabs_before:  # a popup (target=_blank): WebArena's focus moves to it
            tab = self._tabs[-1]
            self._current = len(self._tabs) - 1
            before = -1
        if tab.pending_navigations > before:
            try:
                await tab.page.wait_for_load_state("load")
            except Exception:
                if self._dead():
                    raise
            deadline = loop.time() + self.action_timeout_s
            while tab.pending_navigations and loop.time() < deadline:  # noqa: ASYNC110
                await asyncio.sleep(0.01)

    async def _box(self, tab: _Tab, element_id: int) -> tuple[float, float, bool] | str:
        backend = tab.ids.backend_of.get(element_id)
        if backend is None or element_id not in tab.shown:
            return f"there is no element [{element_id}] on this page; use an id from the current observation"
        cdp = await self._context.new_cdp_session(tab.page)
        try:
            node = await cdp.send("DOM.resolveNode", {"backendNodeId": backend})
            result = await cdp.send(
                "Runtime.callFunctionOn",
                {"objectId": node["object"]["objectId"], "functionDeclaration": _BOX_JS, "returnByValue": True},
            )
        except Exception as exc:
            if self._dead():
                raise
            return f"element [{element_id}] is no longer on the page ({_first_line(exc)}); look at the new observation"
        finally:
            await _detach(cdp)
        box = result.get("result", {}).get("value")
        if not box or box[2] <= 0 or box[3] <= 0:
            return f"element [{element_id}] is not visible on the page, so it cannot be used; pick another element"
        return box[0] + box[2] / 2, box[1] + box[3] / 2, bool(box[4])

    async def _execute(self, action: BrowserAction) -> str:
        """Carry out one action; the answer is an error message for the model, or "" when it went through."""
        tab = self._tab
        page = tab.page
        before, tabs_before = tab.pending_navigations, len(self._tabs)
        opens_tab = False
        try:
            if action.kind in ("click", "hover", "type"):
                assert action.element_id is not None
                point = await self._box(tab, action.element_id)
                if isinstance(point, str):
                    return point
                x, y, opens_tab = point
                if action.kind == "hover":
                    await page.mouse.move(x, y)
                    return ""
                await page.mouse.click(x, y)
                if action.kind == "type":
                    await page.keyboard.type(action.text)
                    if action.enter:
                        await page.keyboard.press("Enter")
            elif action.kind == "press":
                platform = str(await page.evaluate("navigator.platform"))  # WebArena: Meta is Control off a Mac
                await page.keyboard.press(playwright_key(action.text, platform))
            elif action.kind == "scroll":
                sign = "-" if action.text == "up" else ""
                await page.evaluate(f"window.scrollBy(0, {sign}window.innerHeight)")
            elif action.kind == "goto":
                return await self._goto(page, action.text.strip())
            elif action.kind in ("go_back", "go_forward"):
                move = page.go_back if action.kind == "go_back" else page.go_forward
                if await move(wait_until="load") is None:
                    return f"{action.kind} did nothing: there is no page to go {action.kind[3:]} to in this tab"
            elif action.kind == "new_tab":
                new = await self._context.new_page()
                self._current = self._index_of(new)
            elif action.kind == "tab_focus":
                assert action.index is not None
                if not 0 <= action.index < len(self._tabs):
                    return f"there is no tab {action.index}; the open tabs are 0 to {len(self._tabs) - 1}"
                self._current = action.index
                await self._tab.page.bring_to_front()
            elif action.kind == "close_tab":
                self._tabs.pop(self._current)
                await page.close()
                if not self._tabs:  # as WebArena: closing the last tab leaves a blank one
                    self._index_of(await self._context.new_page())
                self._current = len(self._tabs) - 1
                await self._tab.page.bring_to_front()
        except Exception as exc:
            if self._dead():
                raise BrowserCrashed(
                    f"the browser of this session died ({_first_line(exc)}); create a new session"
                ) from exc
            return f"{action.kind} failed: {_first_line(exc)}"
        if action.kind in ("click", "type", "press"):
            await self._settle(tab, before, tabs_before, opens_tab)
        return ""

    async def _snapshot(self, again: bool = False) -> tuple[list[tuple[str, bool]], str, str]:
        current = self._current  # fixed for this snapshot: a late popup event may move the focus meanwhile
        tab = self._tabs[current]
        # A navigation that began after _settle's window (a busy machine can take longer than 100 ms to send a
        # form) and has committed leaves a document still loading: observe it loaded, not as an empty busy root.
        with contextlib.suppress(Exception):  # a page that never loads is still observed, as it is
            await tab.page.wait_for_load_state("load", timeout=self.action_timeout_s * 1000)
        for other in list(self._tabs):  # a page showing a refused URL (or the error of one) is never observed
            reason = escaped(other.page.url, self._policy)
            if reason:
                self._refused.append(self._refusal_of(other.page.url, reason))
                await self._leave(other.page)
        titles = []
        for i, other in enumerate(list(self._tabs)):
            try:
                titles.append((await other.page.title(), i == current))
            except Exception:
                if self._dead():
                    raise
                titles.append(("", i == current))
        cdp = await self._context.new_cdp_session(tab.page)
        deadline = asyncio.get_running_loop().time() + self.action_timeout_s
        try:
            nodes = (await cdp.send("Accessibility.getFullAXTree", {}))["nodes"]
            # A document still being built reports its root busy (an empty tree): read it again once it is not.
            while _busy(nodes) and asyncio.get_running_loop().time() < deadline:
                await asyncio.sleep(0.05)
                nodes = (await cdp.send("Accessibility.getFullAXTree", {}))["nodes"]
        finally:
            await _detach(cdp)
        tree, tab.shown = render(nodes, tab.ids)
        if escaped(tab.page.url, self._policy):  # a refused load's error page came meanwhile
            if not again:
                return await self._snapshot(again=True)
            return [("" if i == current else t, c) for i, (t, c) in enumerate(titles)], "", BLANK  # never shown
        return titles, clean(tree), tab.page.url

    def _observation(self, previous: str, error: str = "") -> str:
        assert self._task is not None
        titles, tree, url = self._run(self._snapshot())
        error = self._observed_error = self._with_refusals(error)
        # WebArena's header: "Tab 0 (current): title | Tab 1: title", a blank line, then the tree.
        tabs = " | ".join(
            f"Tab {i}{' (current)' if current else ''}: {title}" for i, (title, current) in enumerate(titles)
        )
        self._tree = tree
        content = truncate(f"{tabs}\n\n{tree}", self.max_obs_chars)
        text = (
            f"OBSERVATION:\n{content}\nURL: {self._mapper.to_real(url)}\nOBJECTIVE: {self._task.intent}\n"
            f"PREVIOUS ACTION: {previous or 'None'}"
        )
        if error:
            text += f"\nTHE PREVIOUS ACTION FAILED: {error}"
        return text

    def _stop(self, action: BrowserAction) -> StepTuple:
        assert self._task is not None
        self._done = True
        try:
            verdict = evaluate(
                self._task, answer=action.text, page=_SyncPage(self), judge=self.judge, helpers=self._helpers()
            )
        except Exception as exc:  # the agent's doing counts against it; the env's own faults stay env errors
            fault = agent_fault(exc, self._shop_site)
            if fault is None:
                raise
            verdict = Verdict(0.0, [{"type": "agent_error", "check": "agent_error", "score": 0.0, "reason": fault}])
        info = {**self._info(), **_verdict_info(verdict)}
        reward = float(verdict.score or 0.0)
        if verdict.score is None:
            text = "The episode ended; it could not be evaluated: " + "; ".join(verdict.not_evaluated)
        else:
            text = f"The episode ended with score {reward:g}."
        return text, reward, True, False, info

    def _info(self) -> dict[str, Any]:
        assert self._task is not None
        info: dict[str, Any] = {"task_id": self._task.task_id, "steps": self._steps, "tabs": len(self._tabs)}
        if self._tabs:
            info["url"] = self._tab.page.url
        if self._notes:
            info["notes"] = list(self._notes)
        return info


def _verdict_info(verdict: Verdict) -> dict[str, Any]:
    checks = [{k: v for k, v in c.items() if k in ("type", "check", "score", "reason")} for c in verdict.checks]
    if verdict.score is None:
        # Neither won nor lost: the hub must not count it either way (docs: "never silently passed or failed").
        return {"score": None, "not_evaluated": verdict.not_evaluated, "checks": checks}
    return {"score": verdict.score, "won": verdict.score >= 1.0, "checks": checks}


class _SyncPage:
    """The session's current page as the evaluators' synchronous ``Page``; calls go to the browser thread."""

    def __init__(self, env: WebArenaEnv) -> None:
        self._env = env

    @property
    def _page(self) -> Any:
        return self._env._tab.page

    @property
    def url(self) -> str:
        return str(self._page.url)

    def goto(self, url: str) -> Any:
        refusal = self._env._policy.refusal(url)
        if refusal:  # a check's own page off the task's sites: the config is wrong, not the agent
            raise TaskConfigError(redact(f"an evaluation target {url} is off the task's sites: {refusal}"))
        return self._env._run(self._page.goto(url, wait_until="load"))

    def evaluate(self, expression: str) -> Any:
        return self._env._run(self._page.evaluate(expression))

    def content(self) -> str:
        return str(self._env._run(self._page.content()))


async def _detach(cdp: Any) -> None:
    with contextlib.suppress(Exception):  # the page is gone with its session
        await cdp.detach()


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
