"""SciWorld behind real servers: concurrency, JVM lifetimes, capacity, options and errors as a client sees them."""

from __future__ import annotations

import asyncio
import signal

import httpx
import psutil
import pytest

from agenthub import EnvClient, EnvSpec, LocalServer, Outcome, ServiceSettings, Task, ThreadedServer, play_episode
from agenthub_env_sciworld.env import UNKNOWN_ACTION
from agenthub_env_sciworld.oracle import SciWorldOracle
from agenthub_env_sciworld.tasks import task_id_of

CACHED_TASKS = [("find-living-thing", 0), ("find-plant", 150), ("use-thermometer", 405)]


def jvm_pids(parent: psutil.Process | None = None) -> set[int]:
    """ScienceWorld JVMs that are children of ``parent`` (default: this process)."""
    children = (parent or psutil.Process()).children()
    return {p.pid for p in children if _is_scienceworld_jvm(p)}


def _is_scienceworld_jvm(process: psutil.Process) -> bool:
    try:
        return process.status() != psutil.STATUS_ZOMBIE and any("scienceworld.jar" in a for a in process.cmdline())
    except psutil.NoSuchProcess:
        return False


@pytest.mark.anyio
async def test_concurrent_sessions_play_as_they_do_one_by_one(
    sciworld_url: str, sciworld_oracle: SciWorldOracle
) -> None:
    tasks = [
        Task(env="sciworld", task_id=task_id, seed=0)
        for task_id in (
            task_id_of("find-animal", 200),
            task_id_of("chemistry-mix-paint-secondary-color", 30),
            4240,
            1396,
        )
    ]

    async def transcript(client: EnvClient, task: Task) -> list[tuple[str, float, bool, int]]:
        trajectory = await play_episode(client, sciworld_oracle, task)
        assert trajectory.outcome == Outcome.SUCCESS, trajectory.error
        return [(trajectory.first_observation, 0.0, False, 0)] + [
            (turn.observation, turn.reward, turn.terminated, turn.info["score"]) for turn in trajectory.turns
        ]

    async with EnvClient(sciworld_url, timeout=120) as client:
        alone = [await transcript(client, task) for task in tasks]
        together = await asyncio.gather(*(transcript(client, task) for task in tasks))
    assert list(together) == alone


@pytest.mark.anyio
async def test_each_session_holds_one_jvm_freed_on_close_and_capped_by_max_sessions(sciworld_spec: EnvSpec) -> None:
    """In the one-JVM-per-session mode: max_sessions set by the user wins over the env's default; idle_envs=2 keeps
    two JVMs for reuse."""
    before = jvm_pids()
    settings = ServiceSettings(max_sessions=2, env_kwargs={"sessions_per_jvm": 1})
    with ThreadedServer(sciworld_spec, settings) as server:
        async with httpx.AsyncClient(base_url=server.url, timeout=120) as raw:
            ids = []
            for _ in range(2):
                created = await raw.post("/v1/sessions", json={"task_id": 2936})
                assert created.status_code == 201
                ids.append(created.json()["session_id"])
            held = jvm_pids() - before
            assert len(held) == 2
            busy = await raw.post("/v1/sessions", json={"task_id": 2936})
            assert busy.status_code == 503 and "Retry-After" in busy.headers
            assert "maximum of 2 sessions" in busy.json()["error"]["message"]
            assert jvm_pids() - before == held
            for session_id in ids:
                assert (await raw.delete(f"/v1/sessions/{session_id}")).status_code == 204
            assert jvm_pids() - before == held  # kept idle for the next sessions
            again = await raw.post("/v1/sessions", json={"task_id": 2936})
            assert again.status_code == 201 and jvm_pids() - before == held
    assert jvm_pids() - before == set()


@pytest.mark.anyio
async def test_served_by_the_cli_with_a_clean_log_and_no_jvm_left_behind() -> None:
    """``agenthub serve env=sciworld``: the JVMs' output stays out of the server's log; SIGTERM frees them."""
    server = LocalServer("sciworld", overrides={"idle_envs": 0}).start()
    try:
        async with EnvClient(server.url, timeout=120) as client:
            async with await client.create_session(2936, seed=0) as session:
                held = jvm_pids(psutil.Process(server.pid))
                assert len(held) == 1
                assert (await session.step("@@ not an action @@")).observation == UNKNOWN_ACTION
                assert (await session.step("open door to kitchen")).observation == "The door is now open."
            assert jvm_pids(psutil.Process(server.pid)) == set()
            async with await client.create_session(2936, seed=0):
                held = jvm_pids(psutil.Process(server.pid))
        assert server.process is not None
        server.process.send_signal(signal.SIGTERM)
        server.process.wait(timeout=30)
        log = server.log_path.read_text()
    finally:
        server.stop()
    assert not any(psutil.pid_exists(pid) and _is_scienceworld_jvm(psutil.Process(pid)) for pid in held)
    lines = [line for line in log.splitlines() if line.strip()]
    assert lines and all(line.startswith(("agenthub:", "INFO:", "WARNING:")) for line in lines), log
    assert not any(word in log for word in ("py4j", "Exception", "Traceback")), log


@pytest.mark.anyio
async def test_valid_actions_are_opt_in_per_session(sciworld_url: str) -> None:
    async with EnvClient(sciworld_url, timeout=120) as client:
        async with await client.create_session(2936, options={"valid_actions": True}) as listed:
            assert "open door to kitchen" in listed.info["available_actions"]
            assert "go to kitchen" in (await listed.step("open door to kitchen")).info["available_actions"]
        async with await client.create_session(2936) as plain:
            assert "available_actions" not in plain.info
            assert "available_actions" not in (await plain.step("open door to kitchen")).info


@pytest.mark.anyio
@pytest.mark.parametrize(
    "body, message",
    [
        ({"task_id": 7207}, "task ids are integers from 0 to 7206"),
        ({"task_id": "boil"}, "task ids are integers from 0 to 7206"),
        ({"task_id": 0, "options": {"valid_actions": 1}}, "must be true or false"),
        ({"task_id": 0, "options": {"hints": True}}, "unknown sciworld reset option"),
    ],
)
async def test_bad_resets_are_http_422_with_the_reason(
    sciworld_url: str, body: dict[str, object], message: str
) -> None:
    async with httpx.AsyncClient(base_url=sciworld_url, timeout=120) as raw:
        response = await raw.post("/v1/sessions", json=body)
    assert response.status_code == 422
    assert message in response.json()["error"]["message"]
