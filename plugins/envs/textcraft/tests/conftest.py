from __future__ import annotations

from collections.abc import Iterator

import pytest

from agenthub import EnvSpec, ThreadedServer, get_plugin_host
from agenthub_env_textcraft.env import TextCraftEnv


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def env() -> Iterator[TextCraftEnv]:
    instance = TextCraftEnv()
    yield instance
    instance.close()


@pytest.fixture(scope="module")
def spec() -> EnvSpec:
    return get_plugin_host().env("textcraft")


@pytest.fixture(scope="module")
def server_url(spec: EnvSpec) -> Iterator[str]:
    """A real textcraft server on loopback, in a thread of this process."""
    with ThreadedServer(spec) as server:
        yield server.url
