"""Retries, backoff, Retry-After, timeouts and the errors that are not retried, on a real HTTP server."""

from __future__ import annotations

import asyncio
import itertools
import re
import socket
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest
from agenthub import EnvInfo, Observation, Task
from agenthub.rollout import ContextLengthExceeded

from agenthub_agent_openai import ChatReplyError, ChatServerError, ChatServerUnavailableError, OpenAIAgent

if TYPE_CHECKING:
    from conftest import ScriptedChatServer

pytestmark = pytest.mark.anyio

MakeAgent = Callable[..., OpenAIAgent]
TASK = Task(env="guess", task_id=3)
FIRST = "I am thinking of a whole number from 1 to 16."


async def act(agent: OpenAIAgent, info: EnvInfo) -> str:
    reply = await agent.start_episode(TASK, info).act(Observation(text=FIRST))
    assert isinstance(reply.action, str)
    return reply.action


def gaps(chat: ScriptedChatServer) -> list[float]:
    times = [r.at for r in chat.chat_requests]
    return [b - a for a, b in itertools.pairwise(times)]


async def test_a_429_waits_as_long_as_retry_after_says(
    chat: ScriptedChatServer, make_agent: MakeAgent, guess_info: EnvInfo
) -> None:
    chat.fail(429, "rate limited", headers={"Retry-After": "1"})
    chat.reply("Action: guess 8")
    assert await act(make_agent(backoff_s=0.01), guess_info) == "guess 8"
    assert len(chat.chat_requests) == 2
    assert gaps(chat)[0] >= 0.95  # the backoff alone would have been ~0.01 s
    assert chat.chat_requests[0].body == chat.chat_requests[1].body  # the same request, sent again


async def test_retry_after_ms_is_preferred_to_retry_after(
    chat: ScriptedChatServer, make_agent: MakeAgent, guess_info: EnvInfo
) -> None:
    chat.fail(429, headers={"retry-after-ms": "300", "Retry-After": "3600"})
    chat.reply("Action: guess 8")
    assert await act(make_agent(), guess_info) == "guess 8"
    [gap] = gaps(chat)
    assert 0.29 <= gap < 60  # 300 ms, not the hour


async def test_a_retry_after_longer_than_the_cap_is_cut_to_the_cap(
    chat: ScriptedChatServer, make_agent: MakeAgent, guess_info: EnvInfo
) -> None:
    chat.fail(503, "overloaded", headers={"Retry-After": "3600"})
    chat.reply("Action: guess 8")
    assert await act(make_agent(retry_after_max_s=0.05), guess_info) == "guess 8"
    [gap] = gaps(chat)
    assert 0.045 <= gap < 60


async def test_5xx_answers_are_retried_with_backoff_until_one_succeeds(
    chat: ScriptedChatServer, make_agent: MakeAgent, guess_info: EnvInfo
) -> None:
    chat.fail(500, "engine crashed")
    chat.fail(502, "bad gateway")
    chat.fail(503, "overloaded")
    chat.reply("Action: guess 8")
    agent = make_agent(backoff_s=0.05)
    assert await act(agent, guess_info) == "guess 8"
    assert len(chat.chat_requests) == 4 and agent.client.retries == 3
    # Exponential with jitter in [d/2, d]: at least 0.025, 0.05 and 0.1 s.
    assert [g >= floor for g, floor in zip(gaps(chat), [0.025, 0.05, 0.1], strict=True)] == [True] * 3


async def test_when_retries_run_out_the_error_says_what_failed_and_what_to_do(
    chat: ScriptedChatServer, make_agent: MakeAgent, guess_info: EnvInfo
) -> None:
    for _ in range(3):
        chat.fail(502, "bad gateway")
    with pytest.raises(ChatServerUnavailableError) as caught:
        await act(make_agent(max_retries=2), guess_info)
    message = str(caught.value)
    assert "failed 3 time(s)" in message and "HTTP 502: bad gateway" in message and "agent.base_url" in message
    assert len(chat.chat_requests) == 3


async def test_a_refused_connection_is_retried_then_reported(guess_info: EnvInfo) -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    async with OpenAIAgent(base_url=f"http://127.0.0.1:{port}/v1", model="m", max_retries=2, backoff_s=0.01) as agent:
        with pytest.raises(ChatServerUnavailableError, match=r"failed 3 time\(s\); the last error was connect error"):
            await act(agent, guess_info)
        assert agent.client.requests_sent == 3


async def test_a_request_over_its_timeout_is_retried(
    chat: ScriptedChatServer, make_agent: MakeAgent, guess_info: EnvInfo
) -> None:
    chat.answer(chat.completion("Action: guess 1"), delay_s=2.0)
    chat.reply("Action: guess 8")
    assert await act(make_agent(timeout_s=0.3), guess_info) == "guess 8"
    assert len(chat.chat_requests) == 2


async def test_a_server_that_never_answers_in_time_is_reported_as_a_timeout(
    chat: ScriptedChatServer, make_agent: MakeAgent, guess_info: EnvInfo
) -> None:
    for _ in range(2):
        chat.answer(chat.completion("late"), delay_s=2.0)
    with pytest.raises(ChatServerUnavailableError, match=r"read timeout: no answer within agent\.timeout_s=0\.2"):
        await act(make_agent(timeout_s=0.2, max_retries=1), guess_info)


@pytest.mark.parametrize(
    ("status", "message", "advice"),
    [
        (400, "temperature must be non-negative", "check the sampling settings, tool_choice and extra_body"),
        (401, "invalid api key", "this server needs an API key: export it as OPENAI_API_KEY"),
        (404, "The model `gpt-x` does not exist.", "check agent.base_url (the API root"),
        (422, "unknown field", "the server refused the request"),
    ],
    ids=["400", "401", "404", "422"],
)
async def test_client_errors_are_not_retried_and_say_what_to_check(
    chat: ScriptedChatServer,
    make_agent: MakeAgent,
    guess_info: EnvInfo,
    status: int,
    message: str,
    advice: str,
) -> None:
    chat.fail(status, message)
    with pytest.raises(ChatServerError) as caught:
        await act(make_agent(), guess_info)
    assert caught.value.status == status and message in str(caught.value) and advice in str(caught.value)
    assert len(chat.chat_requests) == 1


async def test_a_refused_key_names_its_variable_but_never_the_key(
    chat: ScriptedChatServer, make_agent: MakeAgent, guess_info: EnvInfo, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTHUB_TEST_KEY", "sk-very-secret")
    chat.fail(401, "Incorrect API key provided")
    with pytest.raises(ChatServerError) as caught:
        await act(make_agent(api_key_env="AGENTHUB_TEST_KEY"), guess_info)
    assert "check the API key in the environment variable AGENTHUB_TEST_KEY" in str(caught.value)
    assert "sk-very-secret" not in str(caught.value)


async def test_a_prompt_over_the_context_length_ends_the_episode_as_truncated(
    chat: ScriptedChatServer, make_agent: MakeAgent, guess_info: EnvInfo
) -> None:
    chat.fail(400, "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens.")
    with pytest.raises(ContextLengthExceeded, match="no longer fits the model's context"):
        await act(make_agent(), guess_info)  # the executor records ContextLengthExceeded as truncated


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        ("<html>Bad Gateway</html>", "with a body that is not JSON"),
        ({"object": "list", "data": []}, "has no choices[0].message, so it is not a chat completion"),
        ({"choices": [{"message": {"content": 7}}]}, "choices[0].message.content should be text, got int"),
    ],
    ids=["html", "not a completion", "content not text"],
)
async def test_a_malformed_200_is_a_clear_reply_error(
    chat: ScriptedChatServer,
    make_agent: MakeAgent,
    guess_info: EnvInfo,
    body: dict[str, Any] | str,
    problem: str,
) -> None:
    chat.answer(body)
    with pytest.raises(ChatReplyError, match=re.escape(problem)):
        await act(make_agent(), guess_info)


def test_one_agent_serves_episodes_in_successive_event_loops(chat: ScriptedChatServer, guess_info: EnvInfo) -> None:
    agent = OpenAIAgent(base_url=chat.base_url, model="scripted-model")

    async def one_episode() -> str:
        chat.reply("Action: guess 8")
        try:
            return await act(agent, guess_info)
        finally:
            await agent.aclose()

    assert asyncio.run(one_episode()) == "guess 8"
    assert asyncio.run(one_episode()) == "guess 8"  # a second asyncio.run: new connections, new limit
