"""The client against real server processes on loopback."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import time

import psutil
import pytest

from agenthub import EnvClient, LocalServer, SyncEnvClient
from agenthub.errors import EnvServerUnavailableError, EnvServiceError, ServerBusyError, SessionNotFoundError
from agenthub.service.launcher import ThreadedServer
from agenthub.service.server import spec_from_factory
from agenthub.service.settings import ServiceSettings

from .envs import SlowResetEnv

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


async def test_a_create_cancelled_in_flight_closes_the_session_the_server_made() -> None:
    """An episode cancelled while its session is being built must not hold the server's only slot."""
    settings = ServiceSettings(max_sessions=1)
    with ThreadedServer(spec_from_factory(SlowResetEnv), settings) as server:
        async with EnvClient(server.url, retries=0) as client:
            creating = asyncio.create_task(client.create_session())
            await asyncio.sleep(0.2)  # the request is at the server, inside the 0.5 s reset
            creating.cancel()
            with pytest.raises(asyncio.CancelledError):
                await creating
            session = await client.create_session()  # the one slot is free again: no 503
            assert (await client.health())["sessions"] == 1
            await session.close()
            assert (await client.health())["sessions"] == 0


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


async def test_errors_over_the_socket_keep_their_types_codes_and_urls(guess_server: LocalServer) -> None:
    async with EnvClient(guess_server.url, retries=0) as client:
        session = await client.create_session(task_id=1)
        await session.close()
        with pytest.raises(SessionNotFoundError) as caught:
            await session.step("guess 8")
        assert caught.value.status == 404 and caught.value.code == "session_not_found"
        assert caught.value.url == f"{guess_server.url}/v1/sessions/{session.id}/step"
        with pytest.raises(EnvServiceError) as bad:
            await client.create_session(task_id=-5)  # no task id is negative
        assert 400 <= bad.value.status < 500 and "integer task ids are from 0 to 2**63-1" in str(bad.value)


async def test_a_token_is_sent_on_every_request() -> None:
    with LocalServer("guess", overrides={"token": "s3cret"}) as server:
        assert server.process is not None
        # the token reaches the server by its environment: a command line is readable by every local user
        assert not any("s3cret" in arg for arg in psutil.Process(server.process.pid).cmdline())
        async with EnvClient(server.url, token="s3cret", retries=0) as client:
            session = await client.create_session(task_id=2)
            assert (await session.step("guess 8")).observation
            await session.close()
        async with EnvClient(server.url, token="wrong", retries=0) as client:
            with pytest.raises(EnvServiceError, match="HTTP 401"):
                await client.info()


def test_one_client_serves_successive_event_loops(guess_server: LocalServer) -> None:
    """Connections belong to one event loop: closed at its end, a second asyncio.run opens fresh ones."""
    client = EnvClient(guess_server.url, retries=0)

    async def one_episode() -> str:
        try:
            session = await client.create_session(task_id=3)
            result = await session.step("guess 8")
            await session.close()
            return result.observation
        finally:
            await client.aclose()

    first = asyncio.run(one_episode())
    assert asyncio.run(one_episode()) == first


async def test_a_create_that_may_have_reached_a_dead_server_is_not_retried() -> None:
    """A session create is not idempotent: after a dropped connection the client says so instead of retrying."""
    with LocalServer("guess") as server:
        async with EnvClient(server.url, retries=3, backoff_s=0.05) as client:
            await client.info()  # a pooled keep-alive connection
            server.process.send_signal(signal.SIGSTOP)  # type: ignore[union-attr]
            try:
                pending = asyncio.create_task(client.create_session(task_id=1))
                await asyncio.sleep(0.3)  # the request is written into the frozen server's socket
                server.kill()
                with pytest.raises(EnvServerUnavailableError, match="not safe to retry"):
                    await pending
            finally:
                with contextlib.suppress(ProcessLookupError):
                    server.process.send_signal(signal.SIGCONT)  # type: ignore[union-attr]
