"""Sticky sessions: two real `agenthub serve` replicas of one env behind one load-balanced address.

``RoundRobinProxy`` is a test double for a Kubernetes Service (kube-proxy): it sends each request to the
next replica in turn. kube-proxy balances connections, not requests; balancing every request is the
harsher case, since a pooled connection may carry any session's calls. Without ``advertise_url`` a
session's second call lands on the other replica (404 session_not_found); with it, the create answer's
``Location`` pins each session to its replica and every episode plays through.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import socket
from collections.abc import AsyncIterator, Iterator

import aiohttp
import httpx
import pytest
from aiohttp import web

from agenthub import EnvClient, LocalServer, get_plugin_host
from agenthub.errors import SessionNotFoundError
from agenthub.service.routing import session_base_url
from agenthub.service.server import create_app
from agenthub.service.settings import ServiceSettings

pytestmark = pytest.mark.anyio
_HOP_HEADERS = {"connection", "keep-alive", "transfer-encoding", "content-length", "host"}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def replicas(count: int, *, advertise: bool) -> Iterator[list[LocalServer]]:
    """``count`` guess servers on their own ports; each advertises its own address if ``advertise``."""
    with contextlib.ExitStack() as stack:
        servers = []
        for _ in range(count):
            port = _free_port()
            overrides: dict[str, object] = {"port": port}
            if advertise:
                overrides["advertise_url"] = f"http://127.0.0.1:{port}"
            servers.append(stack.enter_context(LocalServer("guess", overrides=overrides)))
        yield servers


@contextlib.asynccontextmanager
async def round_robin_proxy(backends: list[str]) -> AsyncIterator[tuple[str, list[int]]]:
    """One address in front of ``backends``, each request to the next one; yields its URL and per-backend counts."""
    counts = [0] * len(backends)
    turn = 0
    http = aiohttp.ClientSession(auto_decompress=False)

    async def forward(request: web.Request) -> web.Response:
        nonlocal turn
        index, turn = turn % len(backends), turn + 1
        counts[index] += 1
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _HOP_HEADERS}
        async with http.request(
            request.method, backends[index] + request.path_qs, headers=headers, data=await request.read()
        ) as answer:
            body = await answer.read()
            kept = {k: v for k, v in answer.headers.items() if k.lower() not in _HOP_HEADERS}
            return web.Response(status=answer.status, body=body, headers=kept)

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", forward)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        yield f"http://127.0.0.1:{port}", counts
    finally:
        await runner.cleanup()
        await http.close()


async def play(client: EnvClient, task_id: int) -> tuple[float, str]:
    """One guess episode by bisection; returns its reward and the replica it was pinned to."""
    session = await client.create_session(task_id=task_id, split="train")
    pinned = client.session_url(session.id)
    high = int(re.search(r"from 1 to (\d+)", session.observation).group(1))  # type: ignore[union-attr]
    low, reward, steps = 1, 0.0, 0
    while True:
        guess = (low + high) // 2
        result = await session.step(f"guess {guess}")
        steps += 1
        if result.done:
            reward = result.reward
            break
        if "too low" in result.observation:
            low = guess + 1
        else:
            high = guess - 1
    state = await session.state()
    assert state.turns == steps and state.done  # the replica that answered is the one that played it
    await session.close()
    return reward, pinned


async def test_sessions_stay_on_their_replica_behind_one_address() -> None:
    with replicas(2, advertise=True) as servers:
        async with round_robin_proxy([s.url for s in servers]) as (url, counts), EnvClient(url, retries=0) as client:
            results = await asyncio.gather(*(play(client, task) for task in range(16)))
        assert all(reward == 1.0 for reward, _ in results)  # every episode played to the end, none lost to a 404
        assert all(counts), f"the proxy sent no request to a replica: {counts}"
        assert {pinned for _, pinned in results} == {s.url for s in servers}
        for server in servers:  # both replicas held sessions: the load was spread, not pinned to one
            async with EnvClient(server.url) as direct:
                metrics = await direct._request("GET", "/metrics", idempotent=True)
            made = re.search(rb"^agenthub_sessions_created_total (\S+)", metrics.content, re.M)
            assert made is not None and float(made.group(1)) >= 4


async def test_without_an_advertised_address_a_session_is_lost_behind_the_balancer() -> None:
    # The failure the routing fixes: the same set-up with servers that do not advertise themselves.
    with replicas(2, advertise=False) as servers:
        async with round_robin_proxy([s.url for s in servers]) as (url, _), EnvClient(url, retries=0) as client:
            session = await client.create_session(task_id=0, split="train")
            assert client.session_url(session.id) == url
            with pytest.raises(SessionNotFoundError):
                await session.step("guess 1")


@pytest.mark.parametrize("lean_routes", [True, False])
async def test_both_create_paths_name_the_session_location(lean_routes: bool) -> None:
    # The lean ASGI path and FastAPI's route answer creates alike; both must carry the Location.
    settings = ServiceSettings(advertise_url="http://10.1.2.3:8000", lean_routes=lean_routes)
    app = create_app(get_plugin_host().env("guess"), settings)
    transport = httpx.ASGITransport(app=app)
    async with app.router.lifespan_context(app), httpx.AsyncClient(transport=transport, base_url="http://s") as raw:
        answer = await raw.post("/v1/sessions", json={"task_id": 0, "split": "train"})
    assert answer.status_code == 201
    assert answer.headers["location"] == f"http://10.1.2.3:8000/v1/sessions/{answer.json()['session_id']}"


def test_only_a_location_naming_the_session_is_followed() -> None:
    assert session_base_url("http://10.0.0.7:8000/v1/sessions/abc", "abc") == "http://10.0.0.7:8000"
    assert session_base_url("https://pod.example/v1/sessions/abc", "abc") == "https://pod.example"
    assert session_base_url("http://10.0.0.7:8000/v1/sessions/other", "abc") is None  # another session's
    assert session_base_url("/v1/sessions/abc", "abc") is None  # relative: stay on the address used
    assert session_base_url("ftp://10.0.0.7/v1/sessions/abc", "abc") is None
    assert session_base_url(None, "abc") is None
