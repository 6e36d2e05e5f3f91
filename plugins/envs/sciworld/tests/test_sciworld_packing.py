"""Several sessions in one JVM: isolation, the cap, recycling, and a JVM that dies, in-process and behind a server."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import httpx
import psutil
import pytest

from agenthub import EnvSpec, ServiceSettings, ThreadedServer
from agenthub_env_sciworld.env import SciWorldEnv
from agenthub_env_sciworld.jvm import JVMError
from agenthub_env_sciworld.oracle import SciWorldOracle
from agenthub_env_sciworld.pool import JVMPool, shared_pool
from agenthub_env_sciworld.tasks import task_id_of

MIX_PAINT = task_id_of("chemistry-mix-paint-secondary-color", 30)  # mixing makes new objects mid-episode
FIND_LIVING_THING = task_id_of("find-living-thing", 0)


def gold_transcript(env: SciWorldEnv, oracle: SciWorldOracle, task_id: int) -> list[object]:
    transcript: list[object] = [env.reset(task_id=task_id)]
    for action in oracle.gold_path(task_id):
        transcript.append(env.step(action))
        if transcript[-1][2]:  # type: ignore[index]
            break
    return transcript


def test_sessions_in_one_jvm_play_as_if_alone(sciworld_env: SciWorldEnv, sciworld_oracle: SciWorldOracle) -> None:
    """Interleaved step by step in one JVM, two episodes (one with a simplification) match their solo transcripts."""
    alone = {task_id: gold_transcript(sciworld_env, sciworld_oracle, task_id) for task_id in (MIX_PAINT,)}
    alone_easy = [sciworld_env.reset(task_id=FIND_LIVING_THING, options={"simplifications": "openDoors"})]
    alone_easy += [sciworld_env.step(action) for action in ("go to kitchen", "look around", "open door to outside")]
    other = SciWorldEnv()
    try:
        assert other.jvm is sciworld_env.jvm  # packed: the same JVM, another world
        first = [sciworld_env.reset(task_id=MIX_PAINT)]
        second = [other.reset(task_id=FIND_LIVING_THING, options={"simplifications": "openDoors"})]
        path = sciworld_oracle.gold_path(MIX_PAINT)[: len(alone[MIX_PAINT]) - 1]
        probe = ["go to kitchen", "look around", "open door to outside"]
        for index, action in enumerate(path):
            first.append(sciworld_env.step(action))
            if index < len(probe):
                second.append(other.step(probe[index]))
    finally:
        other.close()
    assert first == alone[MIX_PAINT] and first[-1][4]["won"] is True  # type: ignore[index]
    assert second == alone_easy


@pytest.fixture(scope="module")
def small_pool() -> Iterator[JVMPool]:
    """Two sessions per JVM, replaced after three resets."""
    pool = JVMPool(sessions_per_jvm=2, recycle_after=3)
    yield pool
    pool.close()


def env_in(pool: JVMPool) -> SciWorldEnv:
    return SciWorldEnv(pool=pool)


def test_cap_recycling_and_a_dead_jvm_fail_only_their_sessions(small_pool: JVMPool) -> None:
    a, b = env_in(small_pool), env_in(small_pool)
    first = a.jvm
    assert b.jvm is first and len(small_pool.jvms()) == 1
    c = env_in(small_pool)  # the cap of 2 is reached: a JVM of its own
    try:
        assert c.jvm is not first and len(small_pool.jvms()) == 2
        a.reset(task_id=FIND_LIVING_THING)
        b.reset(task_id=FIND_LIVING_THING)
        assert a.step("open door to kitchen")[0] == "The door is now open."
        a.reset(task_id=FIND_LIVING_THING)  # the third reset on the first JVM: it is spent
        assert a.jvm is first
        a.reset(task_id=FIND_LIVING_THING)  # moves to a JVM with room: c's
        assert a.jvm is c.jvm and a.step("open door to kitchen")[0] == "The door is now open."
        assert b.step("open door to kitchen")[0] == "The door is now open."  # b finishes its episode where it was
        b.reset(task_id=FIND_LIVING_THING)  # the last one out: the spent JVM stops
        assert b.jvm is not first and not first.alive
        assert {id(s.jvm) for s in small_pool.jvms()} == {id(a.jvm), id(b.jvm)}

        victim = a.jvm
        c.reset(task_id=FIND_LIVING_THING)
        victim.process.kill()
        victim.process.wait()
        for env in (a, c):
            with pytest.raises(JVMError, match="create a new session"):
                env.step("look around")
        assert b.step("open door to kitchen")[0] == "The door is now open."  # another JVM: untouched
        observation, _ = a.reset(task_id=FIND_LIVING_THING)  # the next episode plays in a live JVM
        assert a.jvm.alive and a.jvm is not victim and observation.startswith("Your task is to find")
    finally:
        for env in (a, b, c):
            env.close()
    assert small_pool.jvms() == [] and not psutil.pid_exists(victim.pid)


def test_sessions_created_at_once_share_the_jvms_being_started(small_pool: JVMPool) -> None:
    """Three sessions arrive together: two JVMs start side by side (not one each), and the third joins one."""
    with ThreadPoolExecutor(max_workers=3) as threads:
        slots = list(threads.map(lambda _: small_pool.acquire(), range(3)))
    try:
        assert sorted(shared.slots for shared in small_pool.jvms()) == [1, 2]
        assert len({id(slot.shared) for slot in slots}) == 2 and len({id(slot.server) for slot in slots}) == 3
    finally:
        for slot in slots:
            small_pool.release(slot)
    assert small_pool.jvms() == []


def test_an_instance_dropped_without_close_gives_its_place_back(small_pool: JVMPool) -> None:
    env = SciWorldEnv(pool=small_pool)
    jvm = env.jvm
    del env
    gc.collect()
    assert small_pool.jvms() == [] and not jvm.alive


def test_bad_pool_settings_say_what_to_do() -> None:
    with pytest.raises(ValueError, match="sessions_per_jvm must be a positive integer"):
        SciWorldEnv(sessions_per_jvm=0)
    with pytest.raises(ValueError, match="recycle_after must be a positive integer"):
        JVMPool(recycle_after=True)


@pytest.mark.anyio
async def test_a_killed_jvm_fails_its_sessions_and_the_server_stays_up(sciworld_spec: EnvSpec) -> None:
    settings = ServiceSettings(idle_envs=0, env_kwargs={"sessions_per_jvm": 4, "recycle_after": 1000})
    with ThreadedServer(sciworld_spec, settings) as server:
        async with httpx.AsyncClient(base_url=server.url, timeout=120) as raw:
            ids = []
            for _ in range(2):
                created = await raw.post("/v1/sessions", json={"task_id": FIND_LIVING_THING})
                assert created.status_code == 201
                ids.append(created.json()["session_id"])
            # The server's envs share the process's pool for these settings: one JVM holds both sessions.
            pool = shared_pool(sessions_per_jvm=4, recycle_after=1000, heap_mb=256, java=None, options=())
            (shared,) = pool.jvms()
            assert shared.slots == 2
            shared.jvm.process.kill()
            shared.jvm.process.wait()
            for session_id in ids:
                failed = await raw.post(f"/v1/sessions/{session_id}/step", json={"action": "look around"})
                assert failed.status_code == 500
                assert failed.json()["error"]["code"] == "env_error"
                assert "create a new session" in failed.json()["error"]["message"]
                assert (await raw.delete(f"/v1/sessions/{session_id}")).status_code == 204
            fresh = await raw.post("/v1/sessions", json={"task_id": FIND_LIVING_THING})
            assert fresh.status_code == 201
            fresh_id = fresh.json()["session_id"]
            step = await raw.post(f"/v1/sessions/{fresh_id}/step", json={"action": "open door to kitchen"})
            assert step.status_code == 200 and step.json()["observation"] == "The door is now open."
            assert pool.jvms()[0].jvm.alive
