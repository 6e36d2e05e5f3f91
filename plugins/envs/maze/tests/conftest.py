from __future__ import annotations

from collections.abc import Iterator

import pytest
from agenthub import EnvSpec, ThreadedServer, get_plugin_host


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def maze_spec() -> EnvSpec:
    return get_plugin_host().env("maze")


@pytest.fixture(scope="module")
def maze_url(maze_spec: EnvSpec) -> Iterator[str]:
    """A real maze server on loopback, shared by the tests of one module."""
    server = ThreadedServer(maze_spec).start()
    try:
        yield server.url
    finally:
        server.stop()
