"""Envs that declare cheap calls run them on the event loop, and slow ones are moved off it (real servers)."""

from __future__ import annotations

import logging
from typing import Any

import httpx
import pytest

from agenthub.service.launcher import ThreadedServer
from agenthub.service.server import spec_from_factory
from agenthub.service.settings import ServiceSettings

from .envs import ThreadReportingEnv

LOOP_THREAD = "agenthub-server-threads"  # ThreadedServer's thread, where the server's event loop runs
POOL_THREAD = "env-threads"  # the prefix of the server's env threads


def step(client: httpx.Client, session_id: str, action: str) -> dict[str, Any]:
    response = client.post(f"/v1/sessions/{session_id}/step", json={"action": action})
    assert response.status_code == 200, response.text
    return response.json()  # type: ignore[no-any-return]


def test_inline_env_calls_run_on_the_event_loop() -> None:
    with ThreadedServer(spec_from_factory(ThreadReportingEnv)) as server, httpx.Client(base_url=server.url) as client:
        created = client.post("/v1/sessions", json={}).json()
        assert created["info"]["thread"] == LOOP_THREAD
        assert step(client, created["session_id"], "look")["info"]["thread"] == LOOP_THREAD


def test_slow_inline_steps_move_to_the_thread_pool_and_say_so(caplog: pytest.LogCaptureFixture) -> None:
    settings = ServiceSettings(inline_budget_ms=5)
    with (
        caplog.at_level(logging.WARNING, logger="agenthub.service"),
        ThreadedServer(spec_from_factory(ThreadReportingEnv), settings) as server,
        httpx.Client(base_url=server.url) as client,
    ):
        session_id = client.post("/v1/sessions", json={}).json()["session_id"]
        # A lone stall is forgiven, however long: each call counts for at most twice the budget.
        assert step(client, session_id, "sleep 200")["info"]["thread"] == LOOP_THREAD
        assert step(client, session_id, "look")["info"]["thread"] == LOOP_THREAD
        # Most recent calls over the budget: steps move to the pool.
        threads = [step(client, session_id, "sleep 20")["info"]["thread"] for _ in range(12)]
        assert threads[0] == LOOP_THREAD and threads[-1].startswith(POOL_THREAD)
        assert step(client, session_id, "look")["info"]["thread"].startswith(POOL_THREAD)  # for good
        # Only steps moved: resets of a new session still run inline.
        assert client.post("/v1/sessions", json={}).json()["info"]["thread"] == LOOP_THREAD
    warnings = [r.getMessage() for r in caplog.records if "inline step calls took longer" in r.getMessage()]
    assert len(warnings) == 1 and "inline_budget_ms=5" in warnings[0] and "inline_calls=False" in warnings[0]


def test_inline_calls_setting_overrides_the_env_spec() -> None:
    settings = ServiceSettings(inline_calls=False)
    with (
        ThreadedServer(spec_from_factory(ThreadReportingEnv), settings) as server,
        httpx.Client(base_url=server.url) as client,
    ):
        created = client.post("/v1/sessions", json={}).json()
        assert created["info"]["thread"].startswith(POOL_THREAD)
        assert step(client, created["session_id"], "look")["info"]["thread"].startswith(POOL_THREAD)


def test_an_inline_call_past_step_timeout_fails_the_session_with_504() -> None:
    settings = ServiceSettings(step_timeout=0.05, inline_budget_ms=1000)
    with (
        ThreadedServer(spec_from_factory(ThreadReportingEnv), settings) as server,
        httpx.Client(base_url=server.url) as client,
    ):
        session_id = client.post("/v1/sessions", json={}).json()["session_id"]
        late = client.post(f"/v1/sessions/{session_id}/step", json={"action": "sleep 100"})
        assert late.status_code == 504 and late.json()["error"]["code"] == "env_timeout"
        refused = client.post(f"/v1/sessions/{session_id}/step", json={"action": "look"})
        assert refused.status_code == 409 and refused.json()["error"]["code"] == "session_failed"
