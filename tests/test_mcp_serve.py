"""``agenthub serve env=NAME mcp=true``: one server speaks protocol v1 and MCP over the same sessions.

Each test starts the real command on 127.0.0.1 and plays through the MCP SDK's own client, while
plain HTTP calls to the same server show that both sides share one session table: its capacity,
its ttl and its token.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

pytest.importorskip("mcp")

import httpx
from mcp import Client

from tests.test_mcp import call, error_of, http_session, play_both_protocol_eras, play_with_oracle


@contextmanager
def served(tmp_path: Path, *settings: str) -> Iterator[dict[str, str]]:
    """``agenthub serve mcp=true`` as a real process on loopback; yields its ready file ({url, mcp_url})."""
    ready = tmp_path / f"ready-{time.monotonic_ns()}.json"
    log = tmp_path / "serve.log"
    with log.open("w") as output:
        process = subprocess.Popen(
            [sys.executable, "-m", "agenthub", "serve", "mcp=true", "port=0", "--ready-file", str(ready), *settings],
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 120
        while not ready.exists():
            assert process.poll() is None, f"agenthub serve exited before listening: {log.read_text()}"
            assert time.monotonic() < deadline, "agenthub serve did not listen within 120 s"
            time.sleep(0.05)
        yield dict(json.loads(ready.read_text()))
    finally:
        process.terminate()
        process.wait(timeout=30)
        assert "server stopped; closed" in log.read_text()  # a clean stop, the MCP side included


async def sessions_held(url: str) -> int:
    """The sessions the server holds, from its /healthz (open even with a token)."""
    async with httpx.AsyncClient(timeout=30) as client:
        return int((await client.get(f"{url}/healthz")).json()["sessions"])


@pytest.mark.parametrize(("env", "index"), [("guess", 3), ("textcraft", 1)])
def test_an_env_is_played_to_the_end_over_mcp_on_the_http_server(tmp_path: Path, env: str, index: int) -> None:
    async def main(urls: dict[str, str]) -> None:
        async with http_session(urls["mcp_url"]) as session:
            tools = {tool.name for tool in (await session.list_tools()).tools}
            assert tools == {"list_tasks", "start_episode", "act", "end_episode"}
            # the episode is a session of the HTTP server: it shows in /healthz while it runs
            started = await call(session, "start_episode", split="test", seed=5)
            assert started["observation"] and await sessions_held(urls["url"]) == 1
            last = await play_with_oracle(session, env, index)
            assert last["terminated"] is True and last["reward"] > 0
            assert await sessions_held(urls["url"]) == 0
            assert "call start_episode first" in await error_of(session, "act", action="look")

    if env == "textcraft":
        pytest.importorskip("agenthub_env_textcraft")
    with served(tmp_path, f"env={env}") as urls:
        assert urls["mcp_url"] == urls["url"] + "/mcp"
        asyncio.run(main(urls))
        # and the protocol-v1 side still answers as usual
        assert httpx.get(f"{urls['url']}/v1/info", timeout=30).json()["name"] == env


def test_the_sdks_default_client_and_a_legacy_one_play_on_the_http_server(tmp_path: Path) -> None:
    async def main(url: str, mcp_url: str) -> None:
        await play_both_protocol_eras(mcp_url)
        assert await sessions_held(url) == 0  # every episode ended, and its place with it
        async with Client(mcp_url) as modern:  # a sessionless episode is one of the server's sessions
            started = await call(modern, "start_episode", task_id=10_000)
            assert await sessions_held(url) == 1
            await call(modern, "end_episode", episode_id=started["episode_id"])
            assert await sessions_held(url) == 0

    with served(tmp_path, "env=guess") as urls:
        asyncio.run(main(urls["url"], urls["mcp_url"]))


def test_capacity_is_shared_by_http_sessions_and_mcp_episodes(tmp_path: Path) -> None:
    async def main(url: str, mcp_url: str) -> None:
        async with (
            httpx.AsyncClient(base_url=url, timeout=30) as http,
            http_session(mcp_url) as first,
            http_session(mcp_url) as second,
        ):
            created = (await http.post("/v1/sessions", json={"task_id": 10000})).json()
            await call(first, "start_episode", task_id=10001)
            # two places: one HTTP session and one MCP episode fill them, whichever side asks next
            refused = await error_of(second, "start_episode", task_id=10002)
            assert "at capacity: 2 sessions are running, its max_sessions (2, HTTP and MCP together)" in refused
            full = await http.post("/v1/sessions", json={"task_id": 10002})
            assert full.status_code == 503 and full.json()["error"]["code"] == "at_capacity"
            # a place freed on the HTTP side is taken on the MCP side, and the other way round
            assert (await http.delete(f"/v1/sessions/{created['session_id']}")).status_code == 204
            await call(second, "start_episode", task_id=10002)
            await call(first, "end_episode")
            assert (await http.post("/v1/sessions", json={"task_id": 10003})).status_code == 201
            assert await sessions_held(url) == 2
        # the clients closed their MCP sessions: the episode still running in one of them ended with it
        assert await sessions_held(url) == 1

    with served(tmp_path, "env=guess", "max_sessions=2") as urls:
        asyncio.run(main(urls["url"], urls["mcp_url"]))


def test_the_token_guards_mcp_as_it_guards_http(tmp_path: Path) -> None:
    async def main(url: str, mcp_url: str) -> None:
        async with http_session(mcp_url, token="s3cret") as session:
            await call(session, "start_episode", task_id=10000)
            assert await sessions_held(url) == 1  # /healthz stays open, as for HTTP clients

    with served(tmp_path, "env=guess", "token=s3cret") as urls:
        for headers in ({}, {"Authorization": "Bearer wrong"}):
            refused = httpx.post(urls["mcp_url"], json={}, headers=headers, timeout=30)
            assert refused.status_code == 401 and refused.headers["www-authenticate"] == "Bearer"
            assert refused.json()["error"]["code"] == "unauthorized"
            assert "Authorization: Bearer <token>" in refused.json()["error"]["message"]
        asyncio.run(main(urls["url"], urls["mcp_url"]))


def test_an_idle_mcp_episode_expires_with_the_servers_ttl(tmp_path: Path) -> None:
    async def main(url: str, mcp_url: str) -> None:
        async with http_session(mcp_url) as session:
            await call(session, "start_episode", task_id=10000)
            await call(session, "act", action="guess 8")
            await asyncio.sleep(2.5)
            assert await sessions_held(url) == 0  # the server's reaper closed it, as it closes idle HTTP sessions
            gone = await error_of(session, "act", action="guess 4")
            assert "episode is gone: it was idle past the server's ttl of 1.5 s" in gone
            assert "call start_episode for a new one" in gone
            await call(session, "start_episode", task_id=10000)  # and a new one starts on the same MCP session

    with served(tmp_path, "env=guess", "ttl=1.5") as urls:
        asyncio.run(main(urls["url"], urls["mcp_url"]))
