"""Shared fixtures: the built-in env in-process (ASGI) and as a real server process."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest
from fastapi import FastAPI

from agenthub import EnvClient, LocalServer, get_plugin_host
from agenthub.specs import EnvSpec


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def guess_spec() -> EnvSpec:
    return get_plugin_host().env("guess")


@contextlib.asynccontextmanager
async def serving(app: FastAPI) -> AsyncIterator[tuple[EnvClient, httpx.AsyncClient]]:
    """The app in-process with its lifespan running: a protocol client and a raw client."""
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with (
            EnvClient("http://env.test", transport=transport, retries=0) as client,
            httpx.AsyncClient(transport=transport, base_url="http://env.test") as raw,
        ):
            yield client, raw


@pytest.fixture(scope="module")
def guess_server() -> Iterator[LocalServer]:
    """A real `agenthub serve env=guess` child process on a free loopback port."""
    with LocalServer("guess") as server:
        yield server
