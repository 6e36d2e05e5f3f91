from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agenthub import EnvSpec, ThreadedServer, get_plugin_host
from agenthub_env_textworld.games import CACHE_ENV_VAR, GameCache
from agenthub_env_textworld.generation import shutdown_generators


@pytest.fixture(scope="session", autouse=True)
def textworld_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One game cache for the whole run, through the env var, so the servers and oracles built inside
    agenthub (conformance checks) find the games the other tests generated."""
    root = tmp_path_factory.mktemp("textworld-games")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(CACHE_ENV_VAR, str(root))
        yield root
    shutdown_generators()


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def cache(textworld_cache: Path) -> GameCache:
    return GameCache(textworld_cache)


@pytest.fixture(scope="module")
def textworld_spec() -> EnvSpec:
    return get_plugin_host().env("textworld")


@pytest.fixture(scope="module")
def textworld_url(textworld_spec: EnvSpec, textworld_cache: Path) -> Iterator[str]:
    """A real textworld server on loopback, in a thread of this process."""
    with ThreadedServer(textworld_spec) as server:
        yield server.url
