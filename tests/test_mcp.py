"""``agenthub mcp``: envs played end to end by the official MCP SDK's own client, over streamable HTTP and stdio."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any, TextIO

import pytest

pytest.importorskip("mcp")

import httpx
import httpx2
from mcp import Client
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from agenthub import get_plugin_host
from agenthub.service.mcp import EnvMCP
from agenthub.specs import EnvSpec
from agenthub.types import Observation, Task, TaskSplit


class FaultyEnv:
    """Fails on its second step, as a crashing env would."""

    def reset(self, **_: Any) -> tuple[str, dict[str, Any]]:
        self.steps = 0
        return "ready", {}

    def step(self, action: Any) -> tuple[str, float, bool, bool, dict[str, Any]]:
        self.steps += 1
        if self.steps == 2:
            raise RuntimeError("the simulator died")
        return "ok", 0.0, False, False, {}

    def close(self) -> None:
        pass


@contextmanager
def mcp_http_server(tmp_path: Path, *settings: str) -> Iterator[str]:
    """``agenthub mcp transport=http`` as a real process on loopback; yields its /mcp URL."""
    ready = tmp_path / f"ready-{time.monotonic_ns()}.json"
    process = subprocess.Popen(
        [sys.executable, "-m", "agenthub", "mcp", "transport=http", "port=0", "--ready-file", str(ready), *settings],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        while not ready.exists():
            assert process.poll() is None, "agenthub mcp exited before listening"
            assert time.monotonic() < deadline, "agenthub mcp did not listen within 120 s"
            time.sleep(0.1)
        yield str(json.loads(ready.read_text())["url"])
    finally:
        process.terminate()
        process.wait(timeout=30)


@asynccontextmanager
async def http_session(url: str, token: str | None = None) -> AsyncIterator[ClientSession]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as client,
        streamable_http_client(url, http_client=client) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


async def call(session: ClientSession | Client, tool: str, **arguments: Any) -> dict[str, Any]:
    result = await session.call_tool(tool, arguments)
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return dict(result.structured_content)


async def error_of(session: ClientSession | Client, tool: str, **arguments: Any) -> str:
    result = await session.call_tool(tool, arguments)
    assert result.is_error
    return " ".join(getattr(part, "text", "") for part in result.content)


async def play_with_oracle(session: ClientSession | Client, env: str, index: int) -> dict[str, Any]:
    """Play the test split's task ``index`` to its end with the env's own oracle, through MCP tools only."""
    spec = get_plugin_host().env(env)
    oracle = get_plugin_host().agent_for(spec, None).make()
    listed = await call(session, "list_tasks", split="test", limit=5)
    assert listed["env"] == env and len(listed["ids"]) == 5 and listed["count"] >= 5
    task_id = listed["ids"][index]
    started = await call(session, "start_episode", task_id=task_id)
    episode = oracle.start_episode(Task(env=env, task_id=task_id), spec.info())
    observation = Observation(text=started["observation"], info=started["info"])
    for _ in range(started["max_turns"]):
        step = await call(session, "act", action=(await episode.act(observation)).action)
        if step["done"]:
            ended = await call(session, "end_episode")
            assert ended["done"] is True
            return step
        observation = Observation(text=step["observation"], info=step["info"])
    raise AssertionError(f"the {env} oracle did not finish task {task_id}")


async def play_guess(client: Client, task_id: int, *, by_id: bool) -> dict[str, Any]:
    """Play guess's task ``task_id`` to its end with its oracle through the SDK's ``Client``; ``by_id``: name the
    episode by the ``episode_id`` start_episode answered (what a sessionless 2026-07-28 request must do)."""
    spec = get_plugin_host().env("guess")
    oracle = get_plugin_host().agent_for(spec, None).make()
    started = await call(client, "start_episode", task_id=task_id)
    named = {"episode_id": started["episode_id"]} if by_id else {}
    episode = oracle.start_episode(Task(env="guess", task_id=task_id), spec.info())
    observation = Observation(text=started["observation"], info=started["info"])
    for _ in range(started["max_turns"]):
        step = await call(client, "act", action=(await episode.act(observation)).action, **named)
        if step["done"]:
            assert step["terminated"] is True and step["reward"] > 0
            assert (await call(client, "end_episode", **named)) == {
                "ended": True,
                "turns": step["info"]["guesses"],
                "done": True,
            }
            return started
        observation = Observation(text=step["observation"], info=step["info"])
    raise AssertionError(f"the guess oracle did not finish task {task_id}")


async def play_both_protocol_eras(url: str, *, transport: Any = None) -> None:
    """The SDK's default ``Client`` (it negotiates 2026-07-28: no session, so the episode travels as
    ``episode_id``) and ``mode="legacy"`` (an ``initialize`` handshake and a session) each play guess."""
    async with Client(transport or url) as modern:
        assert modern.protocol_version == "2026-07-28"
        tools = {tool.name: tool for tool in (await modern.list_tools()).tools}
        assert set(tools["act"].input_schema["properties"]) == {"action", "episode_id"}
        started = await play_guess(modern, 10_003, by_id=True)
        # a sessionless request that names no episode is told what to pass; an ended episode is gone
        unnamed = await error_of(modern, "act", action="guess 8")
        assert "this request names no episode: pass episode_id, the id start_episode answered" in unnamed
        ended = await error_of(modern, "act", action="guess 8", episode_id=started["episode_id"])
        assert "no episode has this episode_id (never started on this server, or ended)" in ended
    async with Client(transport or url, mode="legacy") as legacy:
        assert legacy.protocol_version == "2025-11-25"
        await play_guess(legacy, 10_004, by_id=False)  # its MCP session remembers its episode
        await play_guess(legacy, 10_005, by_id=True)  # and the id works there too


def test_the_sdks_default_client_and_a_legacy_one_play_over_streamable_http(tmp_path: Path) -> None:
    async def main(url: str) -> None:
        await play_both_protocol_eras(url)
        # one place (max_sessions=1), taken by sessionless clients: episode_id replaces, end_episode frees
        async with Client(url) as first, Client(url) as second:
            held = (await call(first, "start_episode", task_id=10_000))["episode_id"]
            refused = await error_of(second, "start_episode", task_id=10_000)
            assert "at capacity: 1 sessions are running, its max_sessions (1, HTTP and MCP together)" in refused
            again = await call(first, "start_episode", task_id=10_001, episode_id=held)  # keeps its own place
            assert again["episode_id"] != held
            # another client cannot act on an episode without its id, and ids are not guessable
            assert "no episode has this episode_id" in await error_of(second, "act", action="guess 1", episode_id=held)
            await call(first, "end_episode", episode_id=again["episode_id"])
            await call(second, "start_episode", task_id=10_000)  # the freed place is taken

    with mcp_http_server(tmp_path, "env=guess", "max_sessions=1") as url:
        asyncio.run(main(url))


def test_the_sdks_default_client_plays_over_stdio() -> None:
    """(``mode="legacy"`` over stdio: test_an_env_is_played_to_the_end_over_stdio.)"""

    async def main() -> None:
        server = StdioServerParameters(command=sys.executable, args=["-m", "agenthub", "mcp", "env=guess"])
        async with Client(server) as modern:
            assert modern.protocol_version == "2026-07-28"
            await play_guess(modern, 10_003, by_id=False)  # stdio is one client: its episode needs no id
            await play_guess(modern, 10_004, by_id=True)

    asyncio.run(main())


@pytest.mark.parametrize(("env", "index"), [("guess", 1), ("textcraft", 0)])
def test_an_env_is_played_to_the_end_over_streamable_http(tmp_path: Path, env: str, index: int) -> None:
    async def main(url: str) -> None:
        async with http_session(url) as session:
            tools = {tool.name for tool in (await session.list_tools()).tools}
            assert tools == {"list_tasks", "start_episode", "act", "end_episode"}
            last = await play_with_oracle(session, env, index)
            assert last["terminated"] is True and last["reward"] > 0
            assert "call start_episode first" in await error_of(session, "act", action="look")

    if env == "textcraft":
        pytest.importorskip("agenthub_env_textcraft")
    with mcp_http_server(tmp_path, f"env={env}") as url:
        asyncio.run(main(url))


@pytest.mark.parametrize("env", ["guess", "textcraft"])
def test_an_env_is_played_to_the_end_over_stdio(tmp_path: Path, env: str) -> None:
    async def main(errlog: TextIO) -> None:
        server = StdioServerParameters(command=sys.executable, args=["-m", "agenthub", "mcp", f"env={env}"])
        # mode="legacy": the initialize handshake, as a 2025-era client opens it (the default Client: below)
        async with Client(stdio_client(server, errlog=errlog), mode="legacy") as session:
            assert session.protocol_version == "2025-11-25"
            last = await play_with_oracle(session, env, 2)
            assert last["terminated"] is True and last["reward"] > 0
            # refusals are tool errors that say what to do
            assert "has no split 'dev'; choose one of: train, test" in await error_of(
                session, "list_tasks", split="dev"
            )
            assert "list_tasks shows the valid ids" in await error_of(session, "start_episode", task_id="no-such-task")

    if env == "textcraft":
        pytest.importorskip("agenthub_env_textcraft")
    with (tmp_path / "server.log").open("w") as errlog:  # the server's log, kept off the test's output
        asyncio.run(main(errlog))


def test_capacity_one_mcp_session_per_env_session(tmp_path: Path) -> None:
    async def main(url: str) -> None:
        async with http_session(url) as first, http_session(url) as second:
            await call(first, "start_episode", task_id=10000)
            refused = await error_of(second, "start_episode", task_id=10000)
            assert "at capacity: 1 sessions are running, its max_sessions (1, HTTP and MCP together)" in refused
            await call(first, "start_episode", task_id=10001)  # a session restarting keeps its own place
            await call(first, "end_episode")
            await call(second, "start_episode", task_id=10000)  # the freed place is taken

    with mcp_http_server(tmp_path, "env=guess", "max_sessions=1") as url:
        asyncio.run(main(url))


def test_a_token_is_required_on_streamable_http(tmp_path: Path) -> None:
    async def main(url: str) -> None:
        async with http_session(url, token="s3cret") as session:
            assert (await call(session, "start_episode", task_id=10000))["observation"]
        # the SDK's default client, sessionless, with the token on every request
        async with (
            httpx2.AsyncClient(headers={"Authorization": "Bearer s3cret"}, timeout=60) as http,
            Client(streamable_http_client(url, http_client=http)) as modern,
        ):
            assert modern.protocol_version == "2026-07-28"
            await play_guess(modern, 10_001, by_id=True)

    with mcp_http_server(tmp_path, "env=guess", "token=s3cret") as url:
        for headers in ({}, {"Authorization": "Bearer wrong"}):
            refused = httpx.post(url, json={}, headers=headers, timeout=30)
            assert refused.status_code == 401
            assert "Authorization: Bearer <token>" in refused.json()["error"]["message"]
        asyncio.run(main(url))


def test_an_idle_episode_expires_after_the_ttl(tmp_path: Path) -> None:
    async def main(url: str) -> None:
        async with http_session(url) as session:
            await call(session, "start_episode", task_id=10000)
            await call(session, "act", action="guess 8")
            await asyncio.sleep(2.5)
            assert "idle past the server's ttl of 1.5 s" in await error_of(session, "act", action="guess 4")
            assert "call start_episode first" in await error_of(session, "end_episode")

    with mcp_http_server(tmp_path, "env=guess", "ttl=1.5") as url:
        asyncio.run(main(url))


def test_an_env_that_raises_ends_its_episode_with_a_tool_error_that_says_what_to_do() -> None:
    spec = EnvSpec(name="faulty", factory=FaultyEnv, splits={"test": TaskSplit.range(0, 3)}, default_max_turns=5)

    async def main() -> None:
        served = EnvMCP.standalone(spec)
        async with served.running(), Client(served.server) as client:  # the SDK's client, connected in-process
            await client.call_tool("start_episode", {"task_id": 0})
            assert not (await client.call_tool("act", {"action": "go"})).is_error
            failed = await client.call_tool("act", {"action": "go"})
            text = " ".join(getattr(part, "text", "") for part in failed.content)
            assert failed.is_error and "failed (RuntimeError: the simulator died)" in text
            again = await client.call_tool("act", {"action": "go"})
            assert "this episode cannot go on: call start_episode" in " ".join(
                getattr(part, "text", "") for part in again.content
            )
            assert not (await client.call_tool("start_episode", {"task_id": 1})).is_error

    asyncio.run(main())
