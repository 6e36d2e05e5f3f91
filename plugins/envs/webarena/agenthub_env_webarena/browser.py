"""One Chromium per env server, one isolated browser context per session.

Playwright's async API runs on an event loop in a thread of its own (the
*browser thread*), started on first use. Env code runs in the server's thread
pool and hands coroutines to that loop (:meth:`BrowserHost.run`), so sessions
drive their pages concurrently while sharing one browser process. The sync API
is not an option: it binds the browser to the thread that started it, and the
server's pool calls from many threads.

The browser is Debian's Chromium (``/usr/bin/chromium``, or
``$AGENTHUB_CHROMIUM``); Playwright downloads nothing. Chromium is launched by
Playwright's driver over a pipe: when the server dies, even by ``kill -9``, the
driver's stdin closes, the driver exits and Chromium's pipe closes, so the
browser goes with it (tests/test_browser_process.py checks this).

A browser that died (killed, crashed) is noticed by the session using it, which
raises :class:`BrowserCrashed`: the hub answers that as an env failure of that
session only. The next context asks for a new browser.

Chromium runs with its sandbox on (Playwright's ``chromium_sandbox=True``: no
``--no-sandbox``). Chromium refuses to run as root with its sandbox, and a browser
that an agent drives should not hold root anyway, so a server running as root (as
in containers) starts Chromium as an unprivileged user (:mod:`.sandbox`):
``$AGENTHUB_BROWSER_USER``, else ``agenthub-browser`` if that user exists, else
``nobody``. Where the sandbox cannot start (no user namespaces, e.g. Docker's
default seccomp profile, and no setuid ``chrome-sandbox``), ``$AGENTHUB_BROWSER_SANDBOX``
decides: ``auto`` (the default) launches without it and says so loudly (a
WARNING in the log, and :attr:`BrowserHost.sandbox_note` in every episode's
``info["notes"]``); ``require`` refuses to start; ``off`` never tries.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import threading
from collections.abc import Coroutine
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, TypeVar

from agenthub_env_webarena.sandbox import SANDBOX_ENV_VAR, Launcher, sandbox_mode

T = TypeVar("T")
log = logging.getLogger(__name__)

CHROMIUM = os.environ.get("AGENTHUB_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = (
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-dev-shm-usage",  # containers' /dev/shm is often 64 MB: too small for several renderers
)


class BrowserError(RuntimeError):
    """The browser could not be started; the message says what to install or set."""


class BrowserCrashed(RuntimeError):
    """The session's browser, context or page is gone (killed or crashed): an env failure of that session."""


class BrowserHost:
    """The server's browser: a Playwright event loop thread and one Chromium, both started lazily."""

    def __init__(self, executable: str = CHROMIUM, args: tuple[str, ...] = CHROMIUM_ARGS) -> None:
        self.executable = executable
        self.args = args
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._playwright: Any = None
        self._browser: Any = None
        self._launch_lock: asyncio.Lock | None = None
        self._launcher: Launcher | None = None
        self.launches = 0
        """How many times a browser was launched (1 unless one died)."""
        self.sandboxed: bool | None = None
        """Whether the live browser runs with Chromium's sandbox (None before the first launch)."""
        self.sandbox_note = ""
        """Why the browser runs without its sandbox, and how to give it one ("" when it has it)."""

    # -- the loop thread ---------------------------------------------------------------

    def _ensure_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                ready = threading.Event()

                def serve() -> None:
                    asyncio.set_event_loop(loop)
                    loop.call_soon(ready.set)
                    loop.run_forever()

                self._thread = threading.Thread(target=serve, name="agenthub-webarena-browser", daemon=True)
                self._thread.start()
                ready.wait()
                self._loop = loop
            return self._loop

    def run(self, coro: Coroutine[Any, Any, T], timeout_s: float | None = None) -> T:
        """Run ``coro`` on the browser thread and wait for its result (from any other thread)."""
        future = asyncio.run_coroutine_threadsafe(coro, self._ensure_loop())
        try:
            return future.result(timeout_s)
        except FutureTimeout:
            future.cancel()
            raise TimeoutError(f"the browser did not answer within {timeout_s:g}s") from None

    # -- the browser ------------------------------------------------------------------------

    async def browser(self) -> Any:
        """The live browser, launched now if there is none or the last one died."""
        if self._launch_lock is None:
            self._launch_lock = asyncio.Lock()
        async with self._launch_lock:
            if self._browser is not None and self._browser.is_connected():
                return self._browser
            if not os.path.exists(self.executable):  # noqa: ASYNC240  # a stat, once per launch
                raise BrowserError(
                    f"no Chromium at {self.executable}: install Debian's chromium (apt-get install chromium) "
                    "or set AGENTHUB_CHROMIUM to a Chromium executable; Playwright's own download is not used"
                )
            try:
                from playwright.async_api import async_playwright
            except ImportError as exc:
                raise BrowserError(
                    "Playwright is not installed: pip install playwright (no `playwright install`: the browser is "
                    "the system's Chromium)"
                ) from exc
            if self._playwright is None:
                self._playwright = await async_playwright().start()
            if self._browser is not None:
                with contextlib.suppress(Exception):  # already dead: nothing to close
                    await self._browser.close()
            self._browser = await self._launch()
            self.launches += 1
            return self._browser

    async def _launch(self) -> Any:
        """Chromium with its sandbox (as an unprivileged user when this process is root), per the sandbox mode."""
        if self._launcher is None:
            self._launcher = Launcher.for_this_process(self.executable)
        executable = self._launcher.path
        mode = sandbox_mode()
        launch = self._playwright.chromium.launch
        if mode != "off":
            try:
                browser = await launch(executable_path=executable, args=self.args, chromium_sandbox=True)
                self.sandboxed, self.sandbox_note = True, ""
                return browser
            except Exception as exc:
                why = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                if mode == "require":
                    raise BrowserError(
                        f"Chromium could not start with its sandbox ({why}) and {SANDBOX_ENV_VAR}=require; "
                        f"{self._launcher.how_to_sandbox()}"
                    ) from exc
                self.sandbox_note = (
                    f"the browser runs WITHOUT Chromium's sandbox: it could not start with it ({why}); "
                    f"{self._launcher.how_to_sandbox()}"
                )
                log.warning("%s", self.sandbox_note)
        else:
            self.sandbox_note = f"the browser runs WITHOUT Chromium's sandbox: {SANDBOX_ENV_VAR}=off"
            log.warning("%s", self.sandbox_note)
        browser = await launch(executable_path=executable, args=self.args, chromium_sandbox=False)
        self.sandboxed = False
        return browser

    async def new_context(self, **options: Any) -> Any:
        browser = await self.browser()
        try:
            return await browser.new_context(**options)
        except Exception as exc:
            if not browser.is_connected():
                raise BrowserCrashed(f"the browser died while opening a context ({exc}); create a new session") from exc
            raise

    def connected(self) -> bool:
        return self._browser is not None and bool(self._browser.is_connected())

    def open_contexts(self) -> int:
        """Contexts open in the live browser (0 without one): every closed session must leave none behind."""

        async def count() -> int:
            return len(self._browser.contexts) if self.connected() else 0

        return self.run(count(), timeout_s=30)

    def shutdown(self) -> None:
        """Close the browser, stop Playwright, then stop and close the loop thread (the host can start again)."""
        if self._loop is None:
            return

        async def stop() -> None:
            if self._browser is not None:
                with contextlib.suppress(Exception):  # already dead
                    await self._browser.close()
            if self._playwright is not None:
                await self._playwright.stop()
            self._browser = self._playwright = None

        loop, thread = self._loop, self._thread
        try:
            self.run(stop(), timeout_s=30)
        finally:
            loop.call_soon_threadsafe(loop.stop)
            if thread is not None:
                thread.join(timeout=30)
            if not loop.is_running():
                loop.close()  # its self-pipe sockets too, which an unclosed loop leaves to the garbage collector
            with self._lock:
                self._loop = self._thread = None
                self._launch_lock = None
            if self._launcher is not None:
                self._launcher.remove()
                self._launcher = None


_HOST: BrowserHost | None = None
_HOST_LOCK = threading.Lock()


def shared_host() -> BrowserHost:
    """The process's one browser host: every env instance of a server shares it."""
    global _HOST
    with _HOST_LOCK:
        if _HOST is None:
            _HOST = BrowserHost()
        return _HOST
