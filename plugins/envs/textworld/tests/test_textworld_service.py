"""TextWorld behind a real agenthub server: errors, options and invalid actions as a client sees them."""

from __future__ import annotations

import httpx
import pytest

from agenthub import EnvClient


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("task_id", "said"),
    [
        (15_000, "0 to 14999 (train) or 100000 to 101499 (test)"),  # in the wire's range: the env names its own
        ("0", "0 to 14999 (train) or 100000 to 101499 (test)"),
        (-1, "integer task ids are from 0 to 2**63-1"),  # out of the wire's range: refused before the env
    ],
)
async def test_unknown_task_ids_are_http_422_with_the_id_ranges(textworld_url: str, task_id: object, said: str) -> None:
    async with httpx.AsyncClient(base_url=textworld_url) as raw:
        response = await raw.post("/v1/sessions", json={"task_id": task_id})
    assert response.status_code == 422
    assert said in response.json()["error"]["message"]


@pytest.mark.anyio
async def test_unknown_options_are_http_422_naming_the_valid_ones(textworld_url: str) -> None:
    async with httpx.AsyncClient(base_url=textworld_url) as raw:
        response = await raw.post("/v1/sessions", json={"task_id": 0, "options": {"admissible": True}})
    assert response.status_code == 422
    assert "the options are admissible_commands, walkthrough" in response.json()["error"]["message"]


@pytest.mark.anyio
async def test_admissible_commands_and_invalid_actions_over_http(textworld_url: str) -> None:
    async with EnvClient(textworld_url) as client:
        async with await client.create_session(0, options={"admissible_commands": True}) as session:
            assert "look" in session.info["available_actions"]
            result = await session.step("dance wildly")
            assert result.observation == "That's not a verb I recognise."
            assert result.info["invalid_action"] is True and not result.done
            assert "look" in result.info["available_actions"]
        async with await client.create_session(0) as plain:
            assert "available_actions" not in plain.info
            assert "'quit' is not available" in (await plain.step("quit")).observation
