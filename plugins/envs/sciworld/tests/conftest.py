from __future__ import annotations

from collections.abc import Iterator

import pytest

from agenthub import EnvSpec, ThreadedServer, get_plugin_host
from agenthub_env_sciworld.env import SciWorldEnv
from agenthub_env_sciworld.oracle import SciWorldOracle


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def sciworld_spec() -> EnvSpec:
    return get_plugin_host().env("sciworld")


@pytest.fixture(scope="session")
def sciworld_env() -> Iterator[SciWorldEnv]:
    """One in-process env (one JVM) shared by the tests; each test resets it first."""
    env = SciWorldEnv()
    yield env
    env.close()


@pytest.fixture(scope="session")
def sciworld_oracle() -> SciWorldOracle:
    """One oracle for the session, so that each task's gold path is computed once."""
    return SciWorldOracle()


@pytest.fixture(scope="session")
def sciworld_url(sciworld_spec: EnvSpec) -> Iterator[str]:
    """A real sciworld server on loopback, in a thread of this process, with the env's service defaults."""
    with ThreadedServer(sciworld_spec) as server:
        yield server.url
