"""Hostile replies: the server refuses a megabyte before the JVM sees it; the JVM's parser reads the
longest the env takes, and sixteen times that, in time linear in the length."""

from __future__ import annotations

import time

import httpx

from agenthub import EnvSpec
from agenthub.testing import ANOTHER_PROCESS_WALL_S, hostile_actions
from agenthub_env_sciworld.env import SciWorldEnv
from agenthub_env_sciworld.plugin import MAX_ACTION_CHARS


def test_a_megabyte_action_is_refused_by_the_server_before_the_jvm(sciworld_spec: EnvSpec, sciworld_url: str) -> None:
    assert sciworld_spec.info().max_action_chars == MAX_ACTION_CHARS == 4_096
    with httpx.Client(base_url=sciworld_url, timeout=120) as client:
        session_id = client.post("/v1/sessions", json={"task_id": 0, "seed": 0}).json()["session_id"]
        try:
            for shape in ("brackets", "tags", "keywords", "digits"):  # ASCII with no escapes: under 1 MiB as JSON
                started = time.perf_counter()
                response = client.post(
                    f"/v1/sessions/{session_id}/step", json={"action": hostile_actions(1_000_000)[shape]}
                )
                assert time.perf_counter() - started < ANOTHER_PROCESS_WALL_S, shape
                assert response.status_code == 200, response.text
                assert response.json()["info"]["action_too_long"]["chars"] == 1_000_000, shape
        finally:
            client.delete(f"/v1/sessions/{session_id}")


def test_the_jvms_parser_reads_sixteen_times_the_limit_promptly(sciworld_env: SciWorldEnv) -> None:
    sciworld_env.reset(task_id=0, seed=0)
    for shape, action in hostile_actions(16 * MAX_ACTION_CHARS).items():
        started = time.perf_counter()
        _, reward, terminated, _, info = sciworld_env.step(action)
        # About 2 µs a character in the JVM (benchmarks/action_parsing.py): a tenth of a second here. The JVM is
        # another process, so wall time, loosely bounded.
        assert time.perf_counter() - started < ANOTHER_PROCESS_WALL_S, shape
        assert info["invalid_action"] is True and (reward, terminated) == (0.0, False), shape
