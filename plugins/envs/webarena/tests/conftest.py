"""Real pieces for the evaluator tests: Debian's Chromium through Playwright, pages served on loopback."""

from __future__ import annotations

import functools
import http.server
import importlib.util
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]


def skip_or_fail(reason: str) -> None:
    """Skip where the browser is missing; under CI (``AGENTHUB_REQUIRE_PLUGIN_TESTS=1``) fail instead."""
    if os.environ.get("AGENTHUB_REQUIRE_PLUGIN_TESTS") == "1":
        pytest.fail(f"{reason}; CI runs every test: install it (see .ci/run)", pytrace=False)
    pytest.skip(reason)


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        return


@pytest.fixture(scope="session")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """A static site on 127.0.0.1 serving a folder the tests write pages into: (base URL, folder)."""
    root = tmp_path_factory.mktemp("site")
    handler = functools.partial(_Quiet, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", root
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def chromium() -> None:
    """Skip where Chromium or Playwright is missing; under CI (``AGENTHUB_REQUIRE_PLUGIN_TESTS=1``) fail instead.

    For tests whose browser runs in an env (in process on its own thread, or in a server process)."""
    if importlib.util.find_spec("playwright") is None:
        skip_or_fail("Playwright is not installed (pip install playwright; the browser is Debian's chromium)")
    if not Path(CHROMIUM).exists():
        skip_or_fail(f"no Chromium at {CHROMIUM} (apt-get install chromium)")


@pytest.fixture(scope="module")  # not session: Playwright's sync API holds the main thread's event loop
def browser() -> Iterator[Any]:  # while it is open, and async tests of other plugins after these need it
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        skip_or_fail("Playwright is not installed (pip install playwright; the browser is Debian's chromium)")
    if not Path(CHROMIUM).exists():
        skip_or_fail(f"no Chromium at {CHROMIUM} (apt-get install chromium)")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context()
    yield context.new_page()
    context.close()
