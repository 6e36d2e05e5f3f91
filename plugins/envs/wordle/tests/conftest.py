from __future__ import annotations

from collections.abc import Iterator

import pytest
from agenthub import EnvSpec, ThreadedServer, get_plugin_host


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def wordle_spec() -> EnvSpec:
    return get_plugin_host().env("wordle")


@pytest.fixture(scope="module")
def wordle_url(wordle_spec: EnvSpec) -> Iterator[str]:
    """A real wordle server on loopback, shared by the tests of one module."""
    server = ThreadedServer(wordle_spec).start()
    try:
        yield server.url
    finally:
        server.stop()
