"""An action over the env's ``max_action_chars`` is answered as an invalid action before the env sees it,
and no hostile action, however long, keeps a server's event loop from answering (real servers).

Timing bounds are generous on purpose, and on CPU time where the server is a thread of this process
(agenthub.testing.time_bounds): the built-in guess env's pattern before issue 27 took 1.7 s on 16,000
characters of whitespace and would take hours on a megabyte, so only a parser that is not linear breaks
them, not a slow or busy machine.
"""

from __future__ import annotations

import dataclasses
import itertools
import threading
import time
from collections.abc import Iterator, Mapping
from typing import Any

import httpx
import pytest

from agenthub import LocalServer, get_plugin_host
from agenthub.errors import PluginError
from agenthub.protocols import StepTuple
from agenthub.service.action_limit import action_chars
from agenthub.service.launcher import ThreadedServer
from agenthub.service.settings import ServiceSettings
from agenthub.specs import DEFAULT_MAX_ACTION_CHARS, EnvSpec
from agenthub.testing import ANOTHER_PROCESS_WALL_S, MEGABYTE_PARSE_CPU_S, cpu_seconds_at_most
from agenthub.testing.hostile_text import hostile_actions
from agenthub.types import Action, TaskId, TaskSplit, ToolCall

MIB = 1 << 20
BIG_BODIES = {"max_body_bytes": 8 * MIB}
"""Room for a 1 MiB action of four-byte characters, so that the body limit (413) never answers first."""
HEALTHZ_GAP_S = 10.0
"""The longest wait for a /healthz answer while megabyte steps are parsed: a linear parse holds a loop for
a fraction of a second (more on a loaded CI machine), a quadratic one for hours."""
ONE_MB = 1_000_000


def spec(name: str, **changes: Any) -> EnvSpec:
    return dataclasses.replace(get_plugin_host().env(name), **changes)


def step(client: httpx.Client, session_id: str, action: Action, **fields: Any) -> httpx.Response:
    body = {"action": action.model_dump() if isinstance(action, ToolCall) else action, **fields}
    return client.post(f"/v1/sessions/{session_id}/step", json=body, timeout=60)


def refused(response: httpx.Response, chars: int, limit: int) -> dict[str, Any]:
    """The answer of a step the server refused for its length: 200, an invalid action, the episode going on."""
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    assert answer["info"] == {"invalid_action": True, "action_too_long": {"chars": chars, "max_action_chars": limit}}
    assert (answer["reward"], answer["terminated"], answer["truncated"]) == (0.0, False, False)
    assert f"{chars:,} characters" in answer["observation"] and f"at most {limit:,}" in answer["observation"]
    return answer


# -- the spec and /v1/info ---------------------------------------------------------------------------------


def test_every_env_advertises_its_limit_in_info(guess_server: LocalServer) -> None:
    info = httpx.get(f"{guess_server.url}/v1/info").json()
    assert info["max_action_chars"] == DEFAULT_MAX_ACTION_CHARS == get_plugin_host().env("guess").max_action_chars
    assert get_plugin_host().env("trail").info().max_action_chars == 65_536  # it reads a move anywhere in a reply


@pytest.mark.parametrize("bad", [0, -5, True, 2.5])
def test_a_limit_that_is_not_a_positive_integer_is_refused_when_the_plugin_registers(bad: object) -> None:
    with pytest.raises(PluginError, match="max_action_chars must be"):
        spec("guess", max_action_chars=bad)


# -- refusals over the limit ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def guess_at_10() -> Iterator[str]:
    """The guess env with a 10-character limit, on a real server in a thread of this process."""
    with ThreadedServer(spec("guess", max_action_chars=10)) as server:
        yield server.url


def test_an_action_at_the_limit_reaches_the_env_and_one_over_it_does_not(guess_at_10: str) -> None:
    with httpx.Client(base_url=guess_at_10) as client:
        session_id = client.post("/v1/sessions", json={"task_id": 0}).json()["session_id"]
        over = step(client, session_id, "guess 1   !")  # 11 characters: the env would read it as a guess
        refused(over, 11, 10)
        at = step(client, session_id, "guess 1  !").json()  # 10 characters; task 0's number is 13
        assert at["observation"].startswith("1 is too low") and at["info"]["guesses"] == 1


def test_a_refused_action_changes_nothing_and_its_answer_is_replayed_for_its_request_id(guess_at_10: str) -> None:
    with httpx.Client(base_url=guess_at_10) as client:
        session_id = client.post("/v1/sessions", json={"task_id": 0}).json()["session_id"]
        first = step(client, session_id, "x" * 50, request_id="r1")
        again = step(client, session_id, "y" * 70, request_id="r1")
        assert again.headers.get("Idempotent-Replayed") == "true" and again.json() == refused(first, 50, 10)
        state = client.get(f"/v1/sessions/{session_id}").json()
        assert state["turns"] == 1 and state["done"] is False  # a turn of the episode, not a move of the game
        played = step(client, session_id, "guess 8").json()
        assert played["observation"].startswith("8 is too low") and played["info"]["guesses"] == 1  # none spent


def test_a_multi_player_step_over_the_limit_keeps_the_same_seat_on_turn() -> None:
    with (
        ThreadedServer(spec("tictactoe", max_action_chars=16)) as server,
        httpx.Client(base_url=server.url) as client,
    ):
        created = client.post("/v1/sessions", json={}).json()
        assert created["seat"] == 0
        answer = refused(step(client, created["session_id"], "place 5" * 3, seat=0), 21, 16)
        assert answer["seat"] == 0 and answer["rewards"] == {"0": 0.0, "1": 0.0} and "observations" not in answer
        moved = step(client, created["session_id"], "place 5", seat=0).json()
        assert moved["seat"] == 1 and "invalid_action" not in moved["info"]


class EchoToolEnv:
    """A tool-calling env that answers with the length of the call it was sent."""

    def reset(
        self, *, task_id: TaskId | None = None, seed: int | None = None, options: Mapping[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        return "call echo", {}

    def step(self, action: Action) -> StepTuple:
        return f"{action_chars(action)} characters", 0.0, False, False, {}

    def close(self) -> None:
        return None


def test_a_tool_call_counts_its_name_and_its_arguments_as_json() -> None:
    call = ToolCall(name="echo", arguments={"text": "é" * 20})  # {"text":"ééé..."}: 11 + 20 characters
    assert action_chars(call) == len("echo") + 31
    tool_spec = EnvSpec(
        name="echo-tools",
        factory=EchoToolEnv,
        splits={"default": TaskSplit.range(0, 1)},
        default_max_turns=3,
        action_format="tool_call",
        max_action_chars=40,
    )
    with ThreadedServer(tool_spec) as server, httpx.Client(base_url=server.url) as client:
        session_id = client.post("/v1/sessions", json={}).json()["session_id"]
        assert step(client, session_id, call).json()["observation"] == "35 characters"
        longer = ToolCall(name="echo", arguments={"text": "é" * 26})
        refused(step(client, session_id, longer), 41, 40)


# -- a megabyte of hostile text: refused, or parsed in linear time ------------------------------------------------


@pytest.fixture(scope="module")
def guess_process() -> Iterator[LocalServer]:
    """`agenthub serve env=guess` in a child process, with bodies large enough for a megabyte of any text."""
    with LocalServer("guess", overrides=BIG_BODIES) as server:
        yield server


def test_a_megabyte_action_is_refused_promptly_by_a_real_server_and_the_episode_goes_on(
    guess_process: LocalServer,
) -> None:
    with httpx.Client(base_url=guess_process.url) as client:
        session_id = client.post("/v1/sessions", json={"task_id": 3}).json()["session_id"]
        for shape, action in hostile_actions(ONE_MB).items():
            started = time.perf_counter()
            answer = step(client, session_id, action)
            assert time.perf_counter() - started < ANOTHER_PROCESS_WALL_S, shape
            refused(answer, ONE_MB, DEFAULT_MAX_ACTION_CHARS)
        assert step(client, session_id, "guess 8").json()["info"]["guesses"] == 1


@pytest.mark.parametrize("env", ["guess", "trail", "tictactoe"])
def test_each_built_in_parser_answers_a_megabyte_of_hostile_text_through_a_real_server(env: str) -> None:
    """The limit raised past the action, so that the env's own parser reads all of it, on the event loop
    for the envs that run inline (guess, tictactoe)."""
    seat = {"seat": 0} if env == "tictactoe" else {}
    with (
        ThreadedServer(spec(env, max_action_chars=2 * ONE_MB), ServiceSettings(**BIG_BODIES)) as server,
        httpx.Client(base_url=server.url) as client,
    ):
        for shape, action in hostile_actions(ONE_MB).items():
            session_id = client.post("/v1/sessions", json={"task_id": 0}).json()["session_id"]
            with cpu_seconds_at_most(MEGABYTE_PARSE_CPU_S, shape):  # the server is a thread of this process
                answer = step(client, session_id, action, **seat)
            assert answer.status_code == 200, (shape, answer.text)
            assert "action_too_long" not in answer.json()["info"]  # the env, not the limit, answered


def healthz_while_stepping(url: str, actions: list[str], *, task_id: int = 0) -> tuple[float, int]:
    """Send ``actions`` as steps from one thread while another polls ``/healthz``: the longest wait for a
    health answer (between the poller's start, its answers and the end of the steps) and how many came.

    Gaps, not request latencies: a server thread that holds the GIL starves the poller before it sends
    its request, and a request never sent has no latency.
    """
    stop, polling = threading.Event(), threading.Event()
    answered: list[float] = []
    statuses: set[int] = set()

    def poll() -> None:
        with httpx.Client(base_url=url) as client:
            while not stop.is_set():
                statuses.add(client.get("/healthz", timeout=30).status_code)
                answered.append(time.perf_counter())
                polling.set()
                time.sleep(0.005)

    poller = threading.Thread(target=poll, name="healthz-poller")
    with httpx.Client(base_url=url) as client:
        session_id = client.post("/v1/sessions", json={"task_id": task_id}).json()["session_id"]
        poller.start()
        assert polling.wait(timeout=30), "the first /healthz was not answered in 30 s"
        started = time.perf_counter()
        try:
            for action in actions:
                assert step(client, session_id, action).status_code == 200
                client.post(f"/v1/sessions/{session_id}/reset", json={"task_id": task_id})
        finally:
            ended = time.perf_counter()
            stop.set()
            poller.join(timeout=60)
    assert statuses == {200}, statuses
    times = [started, *(t for t in answered if started <= t <= ended), ended]
    return max(b - a for a, b in itertools.pairwise(times)), len(answered)


def test_healthz_answers_promptly_while_an_inline_env_parses_megabyte_actions() -> None:
    """guess runs its steps on the event loop: the parser it runs there must not hold the loop."""
    guess = spec("guess", max_action_chars=2 * ONE_MB)
    assert guess.inline_calls
    settings = ServiceSettings(**BIG_BODIES, inline_budget_ms=10_000)  # steps stay on the loop throughout
    with ThreadedServer(guess, settings) as server:
        shapes = hostile_actions(ONE_MB)
        slowest, answers = healthz_while_stepping(server.url, [shapes["whitespace"], shapes["digits"]] * 3)
    assert answers >= 2 and slowest < HEALTHZ_GAP_S


def test_healthz_answers_promptly_while_a_real_server_refuses_megabyte_actions(guess_process: LocalServer) -> None:
    slowest, answers = healthz_while_stepping(guess_process.url, list(hostile_actions(ONE_MB).values()))
    assert answers >= 2 and slowest < HEALTHZ_GAP_S
