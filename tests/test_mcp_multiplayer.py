"""A multi-player env over MCP: tictactoe's two seats played through the SDK's own client (issue 20)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from mcp import Client
from mcp.client.session import ClientSession

from agenthub import get_plugin_host
from agenthub.builtin.tictactoe import best_cell
from agenthub.service.mcp import EnvMCP
from tests.test_mcp import call, error_of, http_session
from tests.test_mcp_serve import served


def _text(result: Any) -> str:
    return " ".join(getattr(part, "text", "") for part in result.content)


async def _act(client: Client, **arguments: Any) -> dict[str, Any]:
    result = await client.call_tool("act", arguments)
    assert not result.is_error, _text(result)
    assert result.structured_content is not None
    return dict(result.structured_content)


async def _refused(client: Client, **arguments: Any) -> str:
    result = await client.call_tool("act", arguments)
    assert result.is_error
    return _text(result)


def test_both_seats_are_played_to_the_end_and_a_missing_or_wrong_seat_is_a_tool_error() -> None:
    served_env = EnvMCP.standalone(get_plugin_host().env("tictactoe"))

    async def main() -> None:
        async with served_env.running(), Client(served_env.server) as client:
            act_tool = next(t for t in (await client.list_tools()).tools if t.name == "act")
            assert set(act_tool.input_schema["properties"]) == {"action", "seat", "episode_id"}
            assert act_tool.input_schema["required"] == ["action"]
            assert "2 seats, 0 (X), 1 (O)" in (act_tool.description or "")

            started = await client.call_tool("start_episode", {"task_id": 10_000})
            first = dict(started.structured_content or {})
            assert first["players"] == 2 and first["seats"] == ["X", "O"]
            assert (first["seat"], first["seat_name"]) == (0, "X")

            missing = await _refused(client, action="place 5")
            assert "env 'tictactoe' has 2 seats, so act needs `seat`" in missing
            assert "it is seat 0 (X)'s turn; call act with seat=0" in missing
            wrong = await _refused(client, action="place 5", seat=1)
            assert "it is seat 0 (X)'s turn, not seat 1 (O)'s: call act with seat=0" in wrong
            unknown = await _refused(client, action="place 5", seat=7)
            assert "seat 7 does not exist (env 'tictactoe' has seats 0 to 1)" in unknown

            # the oracle plays each seat in turn, each from the seat's own observation
            seat, board, mark, last = first["seat"], first["info"]["board"], first["info"]["mark"], first
            seen = []
            for _ in range(first["max_turns"]):
                seen.append(seat)
                last = await _act(client, action=f"place {best_cell(board, mark) + 1}", seat=seat)
                assert set(last["rewards"]) == {"0", "1"}
                if last["done"]:
                    break
                assert last["seat"] == 1 - seat and last["seat_name"] == ("X", "O")[last["seat"]]
                seat, board, mark = last["seat"], last["info"]["board"], last["info"]["mark"]
            assert last["done"] and last["terminated"] and (last["seat"], last["seat_name"]) == (None, None)
            assert last["rewards"] == {"0": 0.0, "1": 0.0}  # perfect play on both seats is a draw
            assert set(last["observations"]) == {"0", "1"} and "a draw" in last["observations"]["1"]
            assert seen == [0, 1] * 4 + [0]
            assert "the episode is over; call end_episode" in await _refused(client, action="place 1")
            assert "the episode is over; call end_episode" in await _refused(client, action="place 1", seat=0)
            ended = await client.call_tool("end_episode", {})
            assert dict(ended.structured_content or {}) == {"ended": True, "turns": 9, "done": True}

    asyncio.run(main())


def test_single_player_act_keeps_its_schema_and_answers_no_seat() -> None:
    served_env = EnvMCP.standalone(get_plugin_host().env("guess"))

    async def main() -> None:
        async with served_env.running(), Client(served_env.server) as client:
            act_tool = next(t for t in (await client.list_tools()).tools if t.name == "act")
            assert set(act_tool.input_schema["properties"]) == {"action", "episode_id"}
            started = dict((await client.call_tool("start_episode", {"task_id": 10_000})).structured_content or {})
            assert not {"seat", "seat_name", "players", "seats"} & set(started) and started["episode_id"]
            step = await _act(client, action="guess 8")
            assert not {"seat", "seat_name", "rewards"} & set(step)

    asyncio.run(main())


def test_a_win_over_mcp_on_agenthub_serve_gives_each_seat_its_reward(tmp_path: Path) -> None:
    """X wins on the HTTP server's /mcp: the result's rewards say +1 for X and -1 for O; played by a
    2025-era client (its session holds the episode) and by the SDK's default, sessionless one (episode_id)."""

    async def win(session: ClientSession | Client, by_id: bool) -> None:
        started = await call(session, "start_episode", task_id=10_001)
        named = {"episode_id": started["episode_id"]} if by_id else {}
        assert started["seat"] == 0
        assert "it is seat 0 (X)'s turn" in await error_of(session, "act", action="place 1", **named)
        seat = 0
        for cell in (1, 4, 2, 5):
            step = await call(session, "act", action=f"place {cell}", seat=seat, **named)
            seat = step["seat"]
        won = await call(session, "act", action="place 3", seat=0, **named)
        assert won["done"] and won["reward"] == 1.0 and won["rewards"] == {"0": 1.0, "1": -1.0}
        assert "you lost" in won["observations"]["1"]

    async def main(url: str) -> None:
        async with http_session(url) as session:
            await win(session, by_id=False)
        async with Client(url) as client:
            assert client.protocol_version == "2026-07-28"
            await win(client, by_id=True)

    with served(tmp_path, "env=tictactoe") as urls:
        asyncio.run(main(urls["mcp_url"]))
