"""TextCraft behind a real agenthub server: errors and determinism as a client sees them."""

from __future__ import annotations

import httpx
import pytest

from agenthub import EnvClient


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("task_id", "said"),
    [
        (544, "task ids are integers from 0 to 543"),  # in the wire's range: the env names its own
        ("textcraft_3", "task ids are integers from 0 to 543"),
        (-1, "integer task ids are from 0 to 2**63-1"),  # out of the wire's range: refused before the env
    ],
)
async def test_unknown_task_ids_are_http_422(server_url: str, task_id: object, said: str) -> None:
    async with httpx.AsyncClient(base_url=server_url) as raw:
        response = await raw.post("/v1/sessions", json={"task_id": task_id, "seed": 0})
    assert response.status_code == 422
    assert said in response.json()["error"]["message"]


@pytest.mark.anyio
async def test_same_task_and_seed_start_identically_across_sessions(server_url: str) -> None:
    async with EnvClient(server_url) as client:
        starts = []
        for _ in range(2):
            async with await client.create_session(250, seed=77) as session:
                result = await session.step("inventory")
                starts.append((session.observation, session.info, result.observation))
        async with await client.create_session(250, seed=78) as other:
            different_seed = other.observation
    assert starts[0] == starts[1]
    assert different_seed != starts[0][0]
    assert starts[0][1]["goal"] in starts[0][0]
