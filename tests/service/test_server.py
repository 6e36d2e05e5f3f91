"""The service in-process (ASGI, lifespan running): protocol behaviour and bad input."""

from __future__ import annotations

import asyncio
import time

import anyio
import pytest

from agenthub import create_app
from agenthub.errors import EpisodeDoneError, SessionNotFoundError
from agenthub.service.settings import ServiceSettings
from agenthub.specs import EnvSpec

from ..conftest import serving
from .envs import FailingEnv, SlowEnv, VerySlowEnv

pytestmark = pytest.mark.anyio


def error_of(response: object) -> tuple[int, str, str]:
    body = response.json()  # type: ignore[attr-defined]
    return response.status_code, body["error"]["code"], body["error"]["message"]  # type: ignore[attr-defined]


async def test_episode_through_the_protocol(guess_spec: EnvSpec) -> None:
    async with serving(create_app(guess_spec)) as (client, _):
        info = await client.info()
        assert (info.name, info.protocol, info.splits, info.default_max_turns) == ("guess", 1, ["train", "test"], 8)
        assert (await client.tasks("test")).count == 500
        session = await client.create_session(task_id=10_003)
        assert session.task_id == 10_003 and "from 1 to 16" in session.observation
        low, high = 1, 16
        for _ in range(5):
            guess = (low + high) // 2
            result = await session.step(f"guess {guess}")
            if result.terminated:
                break
            low, high = (guess + 1, high) if "too low" in result.observation else (low, guess - 1)
        assert result.terminated and result.reward == 1.0 and result.info["won"] is True
        state = await session.state()
        assert state.done and state.turns >= 1 and state.task_id == 10_003
        await session.close()


async def test_bad_inputs_get_clear_4xx_and_the_server_keeps_serving(guess_spec: EnvSpec) -> None:
    app = create_app(guess_spec, ServiceSettings(max_body_bytes=4096))
    async with serving(app) as (client, raw):
        session = await client.create_session(task_id=1)
        step = f"/v1/sessions/{session.id}/step"

        status, code, message = error_of(
            await raw.post(step, content=b"{nope", headers={"content-type": "application/json"})
        )
        assert (status, code) == (400, "malformed_json") and "not valid JSON" in message

        status, code, message = error_of(await raw.post(step, json={"action": 7}))
        assert (status, code) == (422, "invalid_request") and "action" in message

        status, code, message = error_of(await raw.post("/v1/sessions", json={"task_id": 1, "sed": 3}))
        assert (status, code) == (422, "invalid_request") and "sed" in message

        status, code, message = error_of(await raw.post("/v1/sessions/missing/step", json={"action": "guess 1"}))
        assert (status, code) == (404, "session_not_found") and "POST /v1/sessions" in message

        status, code, message = error_of(await raw.post(step, json={"action": "x" * 10_000}))
        assert (status, code) == (413, "body_too_large") and "max_body_bytes" in message

        status, code, message = error_of(await raw.post("/v1/sessions", json={"task_id": -5}))
        assert (status, code) == (422, "invalid_request") and "from 0 to 2**63-1" in message  # at the wire

        status, code, message = error_of(await raw.post("/v1/sessions", json={"task_id": "five"}))
        assert (status, code) == (422, "invalid_reset") and "non-negative" in message  # by the env

        status, code, message = error_of(await raw.post("/v1/sessions", json={"split": "dev"}))
        assert (status, code) == (422, "unknown_split") and "train, test" in message

        status, code, _ = error_of(await raw.get("/v2/info"))
        assert (status, code) == (404, "no_such_route")

        # Still serving, and the refused requests left the session untouched.
        assert (await session.state()).turns == 0
        assert (await session.step("guess 8")).observation


async def test_step_after_done_is_409_until_reset(guess_spec: EnvSpec) -> None:
    async with serving(create_app(guess_spec)) as (client, _):
        session = await client.create_session(task_id=4)
        for number in range(1, 17):
            result = await session.step(f"guess {number}")
            if result.terminated:
                break
        with pytest.raises(EpisodeDoneError, match="has ended; reset it"):
            await session.step("guess 1")
        again = await session.reset()
        assert again.observation == session.observation
        assert not (await session.state()).done


async def test_wrong_or_missing_token_is_401_but_health_is_open(guess_spec: EnvSpec) -> None:
    async with serving(create_app(guess_spec, ServiceSettings(token="s3cret"))) as (_, raw):
        assert (await raw.get("/healthz")).status_code == 200
        status, code, message = error_of(await raw.get("/v1/info"))
        assert (status, code) == (401, "unauthorized") and "missing" in message
        status, _, message = error_of(await raw.get("/v1/info", headers={"Authorization": "Bearer wrong"}))
        assert status == 401 and "does not match" in message
        assert (await raw.get("/v1/info", headers={"Authorization": "Bearer s3cret"})).status_code == 200


async def test_retried_step_is_not_applied_twice(guess_spec: EnvSpec) -> None:
    async with serving(create_app(guess_spec)) as (client, raw):
        session = await client.create_session(task_id=2)
        body = {"action": "guess 1", "request_id": "req-1"}
        first = await raw.post(f"/v1/sessions/{session.id}/step", json=body)
        second = await raw.post(f"/v1/sessions/{session.id}/step", json=body)
        assert first.json() == second.json()
        assert second.headers["Idempotent-Replayed"] == "true"
        state = await session.state()
        assert state.turns == 1


async def test_capacity_answers_503_with_retry_after(guess_spec: EnvSpec) -> None:
    async with serving(create_app(guess_spec, ServiceSettings(max_sessions=2))) as (client, raw):
        first = await client.create_session(task_id=1)
        await client.create_session(task_id=2)
        response = await raw.post("/v1/sessions", json={})
        status, code, message = error_of(response)
        assert (status, code) == (503, "at_capacity") and "max_sessions" in message
        assert int(response.headers["Retry-After"]) >= 1
        await first.close()
        assert (await raw.post("/v1/sessions", json={})).status_code == 201


async def test_idle_sessions_expire(guess_spec: EnvSpec) -> None:
    async with serving(create_app(guess_spec, ServiceSettings(ttl=0.3))) as (client, raw):
        session = await client.create_session(task_id=1)
        await asyncio.sleep(0.8)
        with pytest.raises(SessionNotFoundError, match=r"expired after 0\.3s idle"):
            await session.step("guess 1")
        assert (await raw.get("/healthz")).json()["sessions"] == 0
        assert 'agenthub_sessions_closed_total{reason="expired"} 1.0' in (await raw.get("/metrics")).text


async def test_steps_on_one_session_never_interleave_and_other_sessions_proceed() -> None:
    SlowEnv.active = SlowEnv.max_active = 0
    async with serving(create_app(SlowEnv)) as (client, _):
        one = await client.create_session()
        await asyncio.gather(*(one.step(f"a{i}") for i in range(3)))
        assert SlowEnv.max_active == 1
        assert (await one.state()).turns == 3
        two = await client.create_session()
        SlowEnv.max_active = 0
        await asyncio.gather(one.step("x"), two.step("y"))
        assert SlowEnv.max_active == 2  # different sessions run side by side, in threads


async def test_blocking_env_code_does_not_stall_the_event_loop() -> None:
    async with serving(create_app(VerySlowEnv)) as (client, raw):
        session = await client.create_session()
        latencies: list[float] = []

        async def ping() -> None:
            await anyio.sleep(0.05)
            started = time.perf_counter()
            assert (await raw.get("/healthz")).status_code == 200
            latencies.append(time.perf_counter() - started)

        await asyncio.gather(session.step("slow"), ping())
        # The step blocks its thread for 2 s; healthz must not wait for it.
        assert latencies[0] < 1.0, "healthz waited for a blocking step: env code ran on the event loop"


async def test_env_exception_is_500_and_the_session_is_refused_afterwards() -> None:
    async with serving(create_app(FailingEnv)) as (client, raw):
        session = await client.create_session()
        status, code, message = error_of(await raw.post(f"/v1/sessions/{session.id}/step", json={"action": "explode"}))
        assert (status, code) == (500, "env_error") and "the simulator crashed" in message
        status, code, message = error_of(await raw.post(f"/v1/sessions/{session.id}/step", json={"action": "ok"}))
        assert (status, code) == (409, "session_failed") and "create a new session" in message
        fresh = await client.create_session()
        assert (await fresh.step("ok")).observation == "fine"


async def test_metrics_are_prometheus_text(guess_spec: EnvSpec) -> None:
    async with serving(create_app(guess_spec)) as (client, raw):
        session = await client.create_session(task_id=1)
        await session.step("guess 3")
        text = (await raw.get("/metrics")).text
        assert "agenthub_sessions_active 1.0" in text
        assert "agenthub_steps_total 1.0" in text
        assert "agenthub_step_seconds_count 1.0" in text
        assert "process_resident_memory_bytes" in text


async def test_shutdown_closes_every_session(guess_spec: EnvSpec) -> None:
    app = create_app(guess_spec)
    async with serving(app) as (client, _):
        for task in range(3):
            await client.create_session(task_id=task)
    assert len(app.state.service.table) == 0
    closed = app.state.service.metrics.sessions_closed.labels(reason="shutdown")._value.get()
    assert closed == 3


def test_env_service_defaults_fill_only_unset_settings() -> None:
    from agenthub.service.settings import apply_env_defaults

    defaults = {"max_sessions": 2, "idle_envs": 0}
    filled = apply_env_defaults(ServiceSettings(), defaults, env_name="jvm")
    assert (filled.max_sessions, filled.idle_envs) == (2, 0)
    chosen = apply_env_defaults(ServiceSettings(max_sessions=9), defaults, env_name="jvm")
    assert (chosen.max_sessions, chosen.idle_envs) == (9, 0)


def test_env_service_defaults_with_unknown_setting_name_the_valid_ones() -> None:
    from agenthub.errors import PluginError
    from agenthub.service.settings import apply_env_defaults

    with pytest.raises(PluginError, match=r"max_sesions.*valid settings are"):
        apply_env_defaults(ServiceSettings(), {"max_sesions": 2}, env_name="jvm")
