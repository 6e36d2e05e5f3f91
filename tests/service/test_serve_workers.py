"""``agenthub serve workers=2``: real worker processes behind one port on 127.0.0.1.

Sessions made through the one port land on both workers; each session's calls reach the worker that
holds it (the create's ``Location``, or passed on by a worker that does not); the clients and the
gymnasium adapter work unchanged; a crashed or hung worker is reported for its own sessions only;
SIGTERM stops every worker.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import socket
import time
from collections.abc import Iterator
from urllib.parse import urlsplit

import httpx
import psutil
import pytest

from agenthub import EnvClient, LocalServer, SyncEnvClient
from agenthub.cli import serve_command
from agenthub.errors import ConfigError, SessionNotFoundError
from agenthub.service.serve import PortUnavailableError
from agenthub.service.settings import ServiceSettings
from agenthub.service.workers import serve_workers
from agenthub.service.workers.plan import read_mark
from agenthub.service.workers.supervisor import worker_base

pytestmark = pytest.mark.anyio
WORKERS = 2
TOKEN = "s3cret-for-workers"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def workers_server() -> LocalServer:
    """``agenthub serve env=guess workers=2 token=...`` in a child process, not started yet."""
    return LocalServer("guess", overrides={"workers": WORKERS, "max_sessions": 64, "token": TOKEN})


@pytest.fixture(scope="module")
def server() -> Iterator[LocalServer]:
    with workers_server() as running:
        yield running


def worker_urls(server: LocalServer) -> list[str]:
    workers = httpx.get(server.url + "/healthz").json()["workers"]
    return [w["url"] for w in sorted(workers, key=lambda w: w["worker"])]


def worker_pids(server: LocalServer) -> dict[int, int]:
    """Each worker's pid, by index: the child of the supervisor listening on that worker's own port."""
    ports = {urlsplit(url).port: index for index, url in enumerate(worker_urls(server))}
    pids = {}
    for child in psutil.Process(server.pid).children():
        for conn in child.net_connections(kind="tcp"):
            if conn.status == psutil.CONN_LISTEN and conn.laddr.port in ports:
                pids[ports[conn.laddr.port]] = child.pid
    assert len(pids) == WORKERS, f"found workers {pids} among the supervisor's children"
    return pids


async def sessions_on_fresh_connections(url: str, count: int) -> list[tuple[EnvClient, str]]:
    """``count`` sessions, each created by its own client (its own connection to the shared port)."""
    made = []
    for task in range(count):
        client = EnvClient(url, token=TOKEN)
        session = await client.create_session(task_id=task)
        made.append((client, session.id))
    return made


async def test_sessions_land_on_both_workers_and_each_reaches_its_own(server: LocalServer) -> None:
    urls = worker_urls(server)
    made = await sessions_on_fresh_connections(server.url, 12)
    try:
        workers_used = {read_mark(session_id) for _, session_id in made}
        # Twelve connections spread by the kernel: all on one worker has odds of 1 in 2,048.
        assert workers_used == {(0, 0), (1, 0)}
        for client, session_id in made:
            mark = read_mark(session_id)
            assert mark is not None
            assert client.session_url(session_id) == urls[mark[0]]  # the create's Location was followed
            result = await client.step(session_id, "guess 8")
            assert "too " in result.observation or result.terminated
        async with httpx.AsyncClient() as http:
            own = [(await http.get(url + "/healthz")).json()["sessions"] for url in urls]  # each worker's own
            assert own == [sum(1 for _, s in made if s.startswith(f"w{i}g0-")) for i in range(WORKERS)]
            assert (await http.get(server.url + "/healthz")).json()["sessions"] == len(made)
    finally:
        for client, session_id in made:
            await client.close_session(session_id)
            await client.aclose()


def test_a_call_at_the_shared_port_is_passed_to_the_sessions_worker(server: LocalServer) -> None:
    with SyncEnvClient(server.url, token=TOKEN) as client:
        session_ids = [client.create_session(task_id=t).id for t in range(4)]
    forwarded = 0
    try:
        for session_id in session_ids * 3:
            # A new connection each time, as a client that never saw the create's Location: any worker may take it.
            answer = httpx.post(f"{server.url}/v1/sessions/{session_id}/step", json={"action": "guess 1"}, headers=AUTH)
            assert answer.status_code in (200, 409), answer.text  # 409: the episode may have ended
            forwarded += "via" in answer.headers
    finally:
        with SyncEnvClient(server.url, token=TOKEN) as client:  # a client that did not create them closes them
            for session_id in session_ids:
                client.close_session(session_id)
    assert forwarded  # twelve fresh connections all at the right worker: 1 in 4,096


def test_sync_client_and_gymnasium_adapter_work_unchanged(server: LocalServer) -> None:
    with SyncEnvClient(server.url, token=TOKEN) as client:
        assert client.health()["status"] == "ok"
        assert client.info().name == "guess"
        session = client.create_session(task_id=3)
        result = client.step(session.id, "guess 8")
        assert result.observation
        client.close_session(session.id)
        env = client.as_gym()
        observation, _ = env.reset(seed=5)
        assert "guess" in observation
        observation, _, _, _, _ = env.step("guess 8")
        assert "8 is" in observation
        env.reset(seed=6)  # reuses the session: a reset at its worker
        env.close()


def test_unknown_sessions_get_json_errors(server: LocalServer) -> None:
    for session_id in ("w7g0-nosuchworker", "w0g0-nosuchsession", "w1g0-nosuchsession", "plain"):
        answer = httpx.post(f"{server.url}/v1/sessions/{session_id}/step", json={"action": "guess 1"}, headers=AUTH)
        assert answer.status_code == 404
        assert answer.json()["error"]["code"] == "session_not_found"


def test_forwarded_calls_keep_the_token_and_body_limit_and_inject_no_header(server: LocalServer) -> None:
    forwarded = 0
    for attempt in range(16):  # fresh connections: half of them reach the worker that does not hold the session
        path = f"/v1/sessions/w{attempt % WORKERS}g0-x%0D%0ASet-Cookie:%20a=b/step"
        refused = httpx.post(server.url + path, json={"action": "guess 1"})
        assert refused.status_code == 401 and refused.json()["error"]["code"] == "unauthorized"
        answer = httpx.post(server.url + path, json={"action": "guess 1"}, headers=AUTH)
        assert answer.status_code == 404 and answer.json()["error"]["code"] == "session_not_found"
        assert "set-cookie" not in answer.headers
        forwarded += "via" in answer.headers
        too_big = httpx.post(server.url + path, content=b"x" * ((1 << 20) + 1), headers=AUTH)
        assert too_big.status_code == 413 and too_big.json()["error"]["code"] == "body_too_large"
    assert forwarded  # none in 16: 1 in 65,536


async def test_a_killed_worker_loses_only_its_sessions_and_sigterm_stops_all() -> None:
    server = workers_server().start()
    made = await sessions_on_fresh_connections(server.url, 12)
    again: list[tuple[EnvClient, str]] = []
    try:
        pids = worker_pids(server)
        os.kill(pids[1], signal.SIGKILL)
        for client, session_id in made:
            if session_id.startswith("w1g0-"):
                with pytest.raises(SessionNotFoundError, match="worker 1 of this server, which exited"):
                    await client.step(session_id, "guess 4")
                async with httpx.AsyncClient(headers=AUTH) as http:  # through the shared port: the same answer
                    answer = await http.post(f"{server.url}/v1/sessions/{session_id}/step", json={"action": "guess 5"})
                assert answer.status_code == 404 and "which exited" in answer.json()["error"]["message"]
            else:
                assert (await client.step(session_id, "guess 4")).observation
        assert pids[0] in {p.pid for p in psutil.Process(server.pid).children()}  # never restarted
        again = await sessions_on_fresh_connections(server.url, 12)
        assert {read_mark(s) for _, s in again} == {(0, 0), (1, 1)}  # worker 1, second start
        for client, session_id in again:
            assert (await client.step(session_id, "guess 4")).observation
        assert "worker 1" in server.log_tail() and "the sessions it held are lost" in server.log_tail()
        workers = list(worker_pids(server).values())  # the restarted one included
    finally:
        for client, _ in made + again:
            await client.aclose()
        code = server.stop()  # SIGTERM to the supervisor
    assert code == 0
    deadline = time.monotonic() + 10
    while any(psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE for p in workers):
        assert time.monotonic() < deadline, f"workers {workers} still run after the supervisor stopped"
        await asyncio.sleep(0.05)


async def test_health_reports_a_worker_that_does_not_answer(server: LocalServer) -> None:
    pid = worker_pids(server)[1]
    os.kill(pid, signal.SIGSTOP)  # hung, not dead: the supervisor has nothing to restart
    # Calls that worker 0 takes ask both workers and hear nothing from worker 1 within 2 s; those that
    # worker 1 took wait until it runs again. Worker 1 stays stopped until the first answer has come (not
    # for a fixed time: on a loaded machine worker 0 may not have asked before a timer resumed worker 1).
    try:
        async with httpx.AsyncClient(timeout=60) as http:
            calls = [asyncio.ensure_future(http.get(server.url + "/healthz")) for _ in range(12)]
            await asyncio.wait(calls, return_when=asyncio.FIRST_COMPLETED, timeout=40)
            os.kill(pid, signal.SIGCONT)
            answers = await asyncio.gather(*calls)
    finally:
        os.kill(pid, signal.SIGCONT)
    for answer in answers:
        if answer.status_code == 503:
            assert answer.json()["error"]["code"] == "worker_unavailable"
            assert "worker 1 of 2" in answer.json()["error"]["message"]
        else:
            assert answer.status_code == 200 and len(answer.json()["workers"]) == WORKERS
    assert 503 in {a.status_code for a in answers}  # 12 connections all on worker 1: 1 in 4,096
    async with httpx.AsyncClient(timeout=20) as http:
        assert (await http.get(server.url + "/healthz")).status_code == 200


def test_workers_on_every_address_need_the_address_clients_use() -> None:
    with pytest.raises(ConfigError, match="advertise_url=http://ADDRESS:PORT"):
        worker_base(ServiceSettings(host="0.0.0.0"))
    assert worker_base(ServiceSettings(host="0.0.0.0", advertise_url="http://10.0.0.5:8000")) == ("http", "10.0.0.5")
    assert worker_base(ServiceSettings(host="::1")) == ("http", "[::1]")


def test_mcp_with_workers_is_refused_in_one_line() -> None:
    args = argparse.Namespace(
        overrides=["env=guess", "workers=2", "mcp=true"], config=None, insecure=False, ready_file=None
    )
    with pytest.raises(ConfigError, match="mcp=true with workers=N is not supported"):
        serve_command.run(args)


@pytest.mark.parametrize("reuse_port", [False, True])
def test_a_port_in_use_is_refused_even_by_a_server_sharing_it(reuse_port: bool) -> None:
    """Another server on the port, even one listening with SO_REUSEPORT, is not joined but named."""
    with socket.socket() as held:
        held.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, int(reuse_port))
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        with pytest.raises(PortUnavailableError, match=f"port {port} is in use"):
            serve_workers("guess", ServiceSettings(port=port), 2)
