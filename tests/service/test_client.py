"""The client against real server processes on loopback."""

from __future__ import annotations

import asyncio
import time

import pytest

from agenthub import EnvClient, LocalServer, SyncEnvClient
from agenthub.errors import EnvServerUnavailableError, ServerBusyError

pytestmark = pytest.mark.anyio


async def test_killed_server_is_reported_promptly() -> None:
    with LocalServer("guess") as server:
        async with EnvClient(server.url, retries=3, backoff_s=0.1, timeout=10) as client:
            session = await client.create_session(task_id=1)
            await session.step("guess 1")
            server.kill()
            started = time.perf_counter()
            with pytest.raises(EnvServerUnavailableError, match="is the environment server running"):
                await session.step("guess 2")
            assert time.perf_counter() - started < 10.0  # bounded retries, not a hang


async def test_503_is_retried_until_a_slot_frees() -> None:
    with LocalServer("guess", overrides={"max_sessions": 1}) as server:
        async with EnvClient(server.url, retries=5, backoff_s=0.05) as client:
            held = await client.create_session(task_id=1)

            async def release_soon() -> None:
                await asyncio.sleep(0.3)
                await held.close()

            releaser = asyncio.create_task(release_soon())
            second = await client.create_session(task_id=2)  # waits on Retry-After, then succeeds
            await releaser
            assert second.task_id == 2
            await second.close()


async def test_503_surfaces_as_server_busy_when_retries_run_out() -> None:
    with LocalServer("guess", overrides={"max_sessions": 1}) as server:
        async with EnvClient(server.url, retries=0) as client:
            await client.create_session(task_id=1)
            with pytest.raises(ServerBusyError, match="maximum of 1 sessions"):
                await client.create_session(task_id=2)


async def test_a_dropped_connection_is_retried_with_the_same_request_id() -> None:
    """The server is killed and restarted on the same port between a step and its retry."""
    with LocalServer("guess") as server:
        port = int(server.url.rsplit(":", 1)[1])
        async with EnvClient(server.url, retries=2, backoff_s=0.05) as client:
            info = await client.info()
            server.kill()
            with LocalServer("guess", overrides={"port": port}) as replacement:
                assert replacement.url == server.url
                assert await client.info() == info  # the pooled connection died; the retry reconnects


def test_sync_client_plays_an_episode(guess_server: LocalServer) -> None:
    with SyncEnvClient(guess_server.url) as client:
        assert client.health()["status"] == "ok"
        session = client.create_session(task_id=5, seed=1)
        result = client.step(session.id, "guess 8")
        assert result.observation.startswith(("8 is too", "Correct"))
        assert client.session_state(session.id).turns == 1
        client.close_session(session.id)
        client.close_session(session.id)  # closing twice is harmless
