"""Token ids and logprobs from vLLM-shaped answers, and the episode's token trace.

The server is a stand-in for vLLM: its answers carry the fields vLLM returns
with ``logprobs: true`` and ``return_token_ids: true``. The same agent against a
real vLLM (its CPU build), token by token, is in ``tests/vllm`` at the
repository root.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest
from agenthub import EnvInfo, Observation, Task

from agenthub_agent_openai import ChatReplyError, OpenAIAgent

if TYPE_CHECKING:
    from conftest import Answer, ScriptedChatServer

pytestmark = pytest.mark.anyio

MakeAgent = Callable[..., OpenAIAgent]
TASK = Task(env="guess", task_id=3)
FIRST = "I am thinking of a whole number from 1 to 16."


async def test_logprobs_true_asks_for_logprobs_and_token_ids_and_carries_them_into_the_reply(
    chat: ScriptedChatServer, make_agent: MakeAgent, guess_info: EnvInfo
) -> None:
    chat.reply("Action: guess 8", logprobs=[-0.1, -0.2, -0.3], token_ids=[11, 12, 13], prompt_token_ids=[1, 2])
    reply = await make_agent(logprobs=True).start_episode(TASK, guess_info).act(Observation(text=FIRST))
    assert reply.action == "guess 8" and reply.token_ids == [11, 12, 13] and reply.logprobs == [-0.1, -0.2, -0.3]
    body = chat.chat_requests[0].body
    assert body["logprobs"] is True and body["return_token_ids"] is True


async def test_token_ids_spelt_as_tokens_are_read_when_the_server_has_no_return_token_ids(
    chat: ScriptedChatServer, make_agent: MakeAgent, guess_info: EnvInfo
) -> None:
    chat.reply("Action: guess 8", logprobs=[-0.5, -0.25], tokens=["token_id:42", "token_id:7"])
    agent = make_agent(logprobs=True, return_token_ids=False, extra_body={"return_tokens_as_token_ids": True})
    reply = await agent.start_episode(TASK, guess_info).act(Observation(text=FIRST))
    assert reply.token_ids == [42, 7] and reply.logprobs == [-0.5, -0.25]
    assert "return_token_ids" not in chat.chat_requests[0].body


async def test_plain_text_tokens_give_logprobs_without_token_ids(
    chat: ScriptedChatServer, make_agent: MakeAgent, guess_info: EnvInfo
) -> None:
    chat.reply("Action: guess 8", logprobs=[-0.5, -0.25], tokens=["Action", ": guess 8"])
    reply = await make_agent(logprobs=True).start_episode(TASK, guess_info).act(Observation(text=FIRST))
    assert reply.token_ids is None and reply.logprobs == [-0.5, -0.25]


async def test_without_logprobs_nothing_is_asked_and_nothing_is_kept(
    chat: ScriptedChatServer, make_agent: MakeAgent, guess_info: EnvInfo
) -> None:
    chat.reply("Action: guess 8", logprobs=[-0.1], token_ids=[11])
    episode = make_agent().start_episode(TASK, guess_info)
    reply = await episode.act(Observation(text=FIRST))
    assert reply.token_ids is None and reply.logprobs is None and episode.token_trace is None
    assert "logprobs" not in chat.chat_requests[0].body and "return_token_ids" not in chat.chat_requests[0].body


async def test_a_server_without_logprobs_support_is_an_error_that_says_to_turn_them_off(
    chat: ScriptedChatServer, make_agent: MakeAgent, guess_info: EnvInfo
) -> None:
    chat.reply("Action: guess 8")
    with pytest.raises(ChatReplyError, match=r"set agent\.logprobs=false"):
        await make_agent(logprobs=True).start_episode(TASK, guess_info).act(Observation(text=FIRST))


async def test_token_ids_and_logprobs_of_different_lengths_are_refused(
    chat: ScriptedChatServer, make_agent: MakeAgent, guess_info: EnvInfo
) -> None:
    chat.reply("Action: guess 8", logprobs=[-0.1, -0.2], token_ids=[11, 12, 13])
    with pytest.raises(ChatReplyError, match="3 token ids but 2 logprobs"):
        await make_agent(logprobs=True).start_episode(TASK, guess_info).act(Observation(text=FIRST))


async def test_the_token_trace_holds_sampled_tokens_masked_and_the_template_between_them_unmasked(
    chat: ScriptedChatServer, make_agent: MakeAgent, guess_info: EnvInfo
) -> None:
    replies = iter(["Action: guess 8", "Action: guess 12"])

    def respond(body: dict[str, Any]) -> Answer:
        return chat.tokenized(body, next(replies))

    chat.responder = respond
    episode = make_agent(logprobs=True, action_format="react").start_episode(TASK, guess_info)
    first = await episode.act(Observation(text=FIRST))
    second = await episode.act(Observation(text="8 is too low."))

    trace = episode.token_trace
    assert trace is not None and first.token_ids is not None and second.token_ids is not None
    assert trace.prompt_ids == chat.chat_requests[0].prompt_token_ids
    sampled = [i for i, m in zip(trace.response_ids, trace.response_mask, strict=True) if m == 1]
    assert sampled == first.token_ids + second.token_ids  # exactly as sampled, never re-encoded
    between = "".join(chr(i) for i, m in zip(trace.response_ids, trace.response_mask, strict=True) if m == 0)
    assert between == "<user>8 is too low.</user><assistant>"
    assert [lp for lp, m in zip(trace.logprobs, trace.response_mask, strict=True) if m == 1] == [-0.5] * len(sampled)
    assert [lp for lp, m in zip(trace.logprobs, trace.response_mask, strict=True) if m == 0] == [0.0] * len(between)


async def test_the_token_trace_is_dropped_when_a_prompt_does_not_extend_the_last(
    chat: ScriptedChatServer, make_agent: MakeAgent, guess_info: EnvInfo, caplog: pytest.LogCaptureFixture
) -> None:
    chat.reply("Action: guess 8", logprobs=[-0.1], token_ids=[11], prompt_token_ids=[1, 2, 3])
    chat.reply("Action: guess 12", logprobs=[-0.2], token_ids=[12], prompt_token_ids=[1, 2, 3, 99, 5])
    episode = make_agent(logprobs=True).start_episode(TASK, guess_info)
    await episode.act(Observation(text=FIRST))
    assert episode.token_trace is not None
    reply = await episode.act(Observation(text="8 is too low."))
    assert episode.token_trace is None
    assert reply.token_ids == [12] and reply.logprobs == [-0.2]  # each reply still carries its own tokens
    assert "does not start with the tokens of the turns before it" in caplog.text
