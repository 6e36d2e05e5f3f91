"""Whole episodes of the built-in ``guess`` env (a real server process) through the hub executor.

The model is the scripted chat server: its replies play binary search, read
from the conversation the agent sent, so a win shows that the agent carried
every observation into the conversation and every parsed action to the env.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import pytest
from agenthub import LocalServer, Observation, Outcome, Task, get_plugin_host
from agenthub.rollout import EnvPool, Executor, episode_requests

from agenthub_agent_openai import OpenAIAgent

if TYPE_CHECKING:
    from conftest import Answer, ScriptedChatServer

pytestmark = pytest.mark.anyio

MakeAgent = Callable[..., OpenAIAgent]


@pytest.fixture(scope="module")
def guess_url() -> Iterator[str]:
    with LocalServer("guess") as server:
        yield server.url


async def binary_search_move(messages: list[dict[str, Any]]) -> str:
    """The next guess of a binary search over the env's answers (the user messages) so far."""
    guess = get_plugin_host().env("guess")
    oracle = get_plugin_host().agent("guess-oracle").make().start_episode(tasks(1)[0], guess.info())
    action = ""
    for message in messages:
        if message["role"] == "user":
            action = str((await oracle.act(Observation(text=message["content"]))).action)
    return action


def tasks(n: int) -> list[Task]:
    return [Task(env="guess", task_id=i, split="test") for i in range(10_000, 10_000 + n)]


async def test_replies_that_play_binary_search_win_every_task(
    chat: ScriptedChatServer, make_agent: MakeAgent, guess_url: str
) -> None:
    async def respond(body: dict[str, Any]) -> Answer:
        move = await binary_search_move(body["messages"])
        return chat.answer_of(f"Thought: halve what is left.\nAction: {move}.")

    chat.responder = respond
    async with EnvPool.from_urls([guess_url]) as pool:
        trajectories = await Executor(pool, make_agent(temperature=0.0), concurrency=4).run(
            episode_requests(tasks(6), samples=2)
        )

    assert len(trajectories) == 12
    assert [t.outcome for t in trajectories] == [Outcome.SUCCESS] * 12
    assert all(t.reward == 1.0 and len(t.turns) <= 5 for t in trajectories)  # ceil(log2(17)) guesses at most
    turn = trajectories[0].turns[0]
    assert isinstance(turn.action, str) and turn.action.startswith("guess ")
    assert turn.text is not None and turn.text.startswith("Thought: halve what is left.\nAction: guess ")
    provenance = trajectories[0].provenance
    assert provenance["agent"] == "openai" and provenance["openai"]["model"] == "scripted-model"
    assert provenance["openai"]["temperature"] == 0.0
    total_turns = sum(len(t.turns) for t in trajectories)
    assert len(chat.chat_requests) == total_turns  # one request per turn, none retried


async def test_a_malformed_reply_ends_the_episode_as_agent_error_with_the_raw_text(
    chat: ScriptedChatServer, make_agent: MakeAgent, guess_url: str
) -> None:
    chat.responder = lambda body: chat.answer_of("I refuse to play this game.\nGood day.")
    async with EnvPool.from_urls([guess_url]) as pool:
        [trajectory] = await Executor(pool, make_agent()).run(episode_requests(tasks(1)))
    assert trajectory.outcome is Outcome.AGENT_ERROR and trajectory.attempts == 1 and not trajectory.trainable
    assert trajectory.error is not None and "ActionParseError" in trajectory.error
    assert "I refuse to play this game.\\nGood day." in trajectory.error
    assert "the reply has no 'Action:' line" in trajectory.error
    assert trajectory.turns == []


async def test_a_malformed_reply_mid_episode_keeps_the_turns_before_it(
    chat: ScriptedChatServer, make_agent: MakeAgent, guess_url: str
) -> None:
    chat.reply("Action: guess 1")
    chat.reply("Thought: I am lost and\nhave no idea")
    async with EnvPool.from_urls([guess_url]) as pool:
        [trajectory] = await Executor(pool, make_agent()).run(episode_requests([Task(env="guess", task_id=5)]))
    assert trajectory.outcome is Outcome.AGENT_ERROR and len(trajectory.turns) == 1
    assert trajectory.turns[0].action == "guess 1"


async def test_the_concurrency_limit_holds_across_all_episodes(
    chat: ScriptedChatServer, make_agent: MakeAgent, guess_url: str
) -> None:
    async def respond(body: dict[str, Any]) -> Answer:
        return chat.answer_of(f"Action: {await binary_search_move(body['messages'])}", delay_s=0.02)

    chat.responder = respond
    async with EnvPool.from_urls([guess_url]) as pool:
        trajectories = await Executor(pool, make_agent(max_concurrency=2), concurrency=8).run(
            episode_requests(tasks(8))
        )
    assert all(t.outcome is Outcome.SUCCESS for t in trajectories)
    assert chat.peak == 2  # never more than 2 requests in flight, and the limit was reached


async def test_token_ids_logprobs_and_the_token_trace_reach_the_trajectory(
    chat: ScriptedChatServer, make_agent: MakeAgent, guess_url: str
) -> None:
    async def respond(body: dict[str, Any]) -> Answer:
        return chat.tokenized(body, f"Action: {await binary_search_move(body['messages'])}")

    chat.responder = respond
    async with EnvPool.from_urls([guess_url]) as pool:
        [trajectory] = await Executor(pool, make_agent(logprobs=True)).run(episode_requests(tasks(1)))
    assert trajectory.outcome is Outcome.SUCCESS
    assert all(t.token_ids and t.logprobs and len(t.token_ids) == len(t.logprobs) for t in trajectory.turns)
    tokens = trajectory.tokens
    assert tokens is not None
    sampled = [i for i, m in zip(tokens.response_ids, tokens.response_mask, strict=True) if m]
    assert sampled == [i for t in trajectory.turns for i in t.token_ids or []]
    assert tokens.prompt_ids == chat.chat_requests[0].prompt_token_ids
