"""Integers are checked against their range at the wire, so that no value can reach an env or an answer
that the protocol cannot carry (orjson, SQLite and C RNGs hold 64 bits): task ids are 0 to 2**63-1, seeds
64-bit, seats the env's own. A value outside is a 422 that names the range, on the lean hot path and the
FastAPI path alike, and the session is left as it was (never a 500 on every later call)."""

from __future__ import annotations

import httpx
import pytest

from agenthub import create_app, get_plugin_host
from agenthub.types import MAX_TASK_ID

from ..conftest import serving

pytestmark = pytest.mark.anyio


def refusal(response: httpx.Response) -> tuple[int, str, str]:
    body = response.json()
    return response.status_code, body["error"]["code"], body["error"]["message"]


async def create(raw: httpx.AsyncClient, **body: object) -> dict[str, object]:
    response = await raw.post("/v1/sessions", json=body)
    assert response.status_code == 201, response.text
    created: dict[str, object] = response.json()
    return created


# 2**63 fits orjson's u64 (refused by the lean path's model); 2**64 and 10**30 are floats to orjson and
# ints to FastAPI's parser: both paths must refuse with the same words.
OUT_OF_RANGE = [2**63, 2**64, 10**30, -1, -(2**64)]


@pytest.mark.parametrize("task_id", OUT_OF_RANGE, ids=["2^63", "2^64", "10^30", "-1", "-2^64"])
async def test_a_task_id_out_of_range_is_422_naming_it_and_the_session_lives_on(task_id: int) -> None:
    async with serving(create_app(get_plugin_host().env("tictactoe"))) as (_, raw):
        status, code, message = refusal(await raw.post("/v1/sessions", json={"task_id": task_id}))
        assert (status, code) == (422, "invalid_request") and "from 0 to 2**63-1" in message, message
        session = await create(raw, task_id=5)
        where = f"/v1/sessions/{session['session_id']}"
        status, code, message = refusal(await raw.post(f"{where}/reset", json={"task_id": task_id}))
        assert (status, code) == (422, "invalid_request") and "from 0 to 2**63-1" in message, message
        state = await raw.get(where)  # this used to be a 500 on every GET once a reset took 2**64
        assert state.status_code == 200 and state.json()["task_id"] == 5
        step = await raw.post(f"{where}/step", json={"action": "place 5", "seat": 0})
        assert step.status_code == 200, step.text


async def test_the_largest_task_id_is_carried_exactly() -> None:
    async with serving(create_app(get_plugin_host().env("tictactoe"))) as (_, raw):
        session = await create(raw, task_id=MAX_TASK_ID)
        assert session["task_id"] == MAX_TASK_ID
        where = f"/v1/sessions/{session['session_id']}"
        assert (await raw.post(f"{where}/reset", json={"task_id": MAX_TASK_ID})).status_code == 200
        assert (await raw.get(where)).json()["task_id"] == MAX_TASK_ID


@pytest.mark.parametrize("seed", [2**63, 2**64, -(2**63) - 1], ids=["2^63", "2^64", "-2^63-1"])
async def test_a_seed_past_64_bits_is_422_naming_the_range(seed: int) -> None:
    async with serving(create_app(get_plugin_host().env("guess"))) as (_, raw):
        status, code, message = refusal(await raw.post("/v1/sessions", json={"seed": seed}))
        assert (status, code) == (422, "invalid_request") and "64-bit integers" in message, message
        assert (await raw.post("/v1/sessions", json={"seed": -(2**63)})).status_code == 201


async def test_integers_written_with_a_zero_fraction_are_integers_as_json_schema_says() -> None:
    async with serving(create_app(get_plugin_host().env("tictactoe"))) as (_, raw):
        session = await create(raw, task_id=3.0, seed=7.0)
        assert session["task_id"] == 3 and isinstance(session["task_id"], int)
        step = await raw.post(f"/v1/sessions/{session['session_id']}/step", json={"action": "place 1", "seat": 0.0})
        assert step.status_code == 200 and step.json()["seat"] == 1
        status, code, _ = refusal(await raw.post("/v1/sessions", json={"task_id": 2.0**60}))
        assert (status, code) == (422, "invalid_request")  # past 2**53 a float may be a rounded id: refused


async def test_a_seat_the_document_rules_out_is_refused_even_on_a_retried_request_id() -> None:
    async with serving(create_app(get_plugin_host().env("tictactoe"))) as (_, raw):
        session = await create(raw)
        step = f"/v1/sessions/{session['session_id']}/step"
        first = await raw.post(step, json={"action": "place 5", "seat": 0, "request_id": "r1"})
        assert first.status_code == 200
        for body, code in (({}, "seat_required"), ({"seat": 2}, "unknown_seat"), ({"seat": 2**70}, "unknown_seat")):
            status, got, message = refusal(await raw.post(step, json={"action": "place 5", "request_id": "r1", **body}))
            assert (status, got) == (422, code), message
        assert "seats 0 to 1" in message
        again = await raw.post(step, json={"action": "place 5", "seat": 0, "request_id": "r1"})
        assert again.json() == first.json() and again.headers["idempotent-replayed"] == "true"


async def test_a_single_player_step_with_a_seat_is_refused_even_on_a_retried_request_id() -> None:
    async with serving(create_app(get_plugin_host().env("guess"))) as (_, raw):
        session = await create(raw, task_id=1)
        step = f"/v1/sessions/{session['session_id']}/step"
        assert (await raw.post(step, json={"action": "guess 3", "request_id": "r1"})).status_code == 200
        status, code, _ = refusal(await raw.post(step, json={"action": "guess 3", "request_id": "r1", "seat": 0}))
        assert (status, code) == (422, "seat_not_expected")
