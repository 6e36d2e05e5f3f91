"""What the agent sends and how it reads the answers, checked on a real HTTP server that records requests."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest
from agenthub import ConfigError, EnvInfo, Observation, Task, ToolCall

from agenthub_agent_openai import ActionParseError, ChatServerError, OpenAIAgent
from agenthub_agent_openai.settings import DEFAULT_REACT_INSTRUCTIONS

if TYPE_CHECKING:
    from conftest import ScriptedChatServer

pytestmark = pytest.mark.anyio

MakeAgent = Callable[..., OpenAIAgent]
TASK = Task(env="guess", task_id=3)
FIRST = "I am thinking of a whole number from 1 to 16. You have 8 guesses. Reply with: guess <number>"

TOOLS_ENV = EnvInfo(
    name="calculator",
    version="1",
    action_format="tool_call",
    default_max_turns=5,
    splits=["test"],
    instructions="Use the tools.",
    tools=[
        {
            "name": "guess",
            "description": "Guess the number.",
            "parameters": {"type": "object", "properties": {"number": {"type": "integer"}}, "required": ["number"]},
        }
    ],
)


def call(call_id: str | None, name: str, arguments: str) -> dict[str, Any]:
    entry: dict[str, Any] = {"type": "function", "function": {"name": name, "arguments": arguments}}
    if call_id is not None:
        entry["id"] = call_id
    return entry


async def test_a_request_carries_model_messages_sampling_extra_body_and_the_key_from_the_env_var(
    chat: ScriptedChatServer, make_agent: MakeAgent, guess_info: EnvInfo, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTHUB_TEST_KEY", "k-123")
    agent = make_agent(
        api_key_env="AGENTHUB_TEST_KEY",
        temperature=0.3,
        top_p=0.9,
        max_tokens=64,
        stop=["Observation:"],
        seed=7,
        extra_body={"top_k": 20, "chat_template_kwargs": {"enable_thinking": False}},
        extra_headers={"X-Team": "rl"},
    )
    chat.reply("Thought: start in the middle.\nAction: guess 8")
    reply = await agent.start_episode(TASK, guess_info).act(Observation(text=FIRST))

    assert reply.action == "guess 8"
    assert reply.text == "Thought: start in the middle.\nAction: guess 8"  # the raw reply is kept
    assert reply.token_ids is None and reply.logprobs is None
    [request] = chat.chat_requests
    assert request.headers["authorization"] == "Bearer k-123" and request.headers["x-team"] == "rl"
    assert request.body == {
        "model": "scripted-model",
        "messages": [
            {"role": "system", "content": f"{guess_info.instructions}\n\n{DEFAULT_REACT_INSTRUCTIONS}"},
            {"role": "user", "content": FIRST},
        ],
        "temperature": 0.3,
        "top_p": 0.9,
        "max_tokens": 64,
        "stop": ["Observation:"],
        "seed": 7,
        "top_k": 20,
        "chat_template_kwargs": {"enable_thinking": False},
    }


async def test_no_authorization_header_is_sent_without_a_key(
    chat: ScriptedChatServer, make_agent: MakeAgent, guess_info: EnvInfo
) -> None:
    chat.reply("guess 8")
    await make_agent().start_episode(TASK, guess_info).act(Observation(text=FIRST))
    assert "authorization" not in chat.chat_requests[0].headers


async def test_the_conversation_alternates_model_replies_and_env_answers(
    chat: ScriptedChatServer, make_agent: MakeAgent, guess_info: EnvInfo
) -> None:
    episode = make_agent().start_episode(TASK, guess_info)
    replies = ["Thought: middle.\nAction: guess 8", "Thought: higher.\nAction: guess 12", "Action: guess 14"]
    observations = [FIRST, "8 is too low. 7 guesses left.", "12 is too low. 6 guesses left."]
    actions = []
    for text, observation in zip(replies, observations, strict=True):
        chat.reply(text)
        actions.append((await episode.act(Observation(text=observation))).action)

    assert actions == ["guess 8", "guess 12", "guess 14"]
    assert [m["role"] for m in chat.chat_requests[2].messages] == [
        "system",
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
    ]
    assert chat.chat_requests[2].messages[1:] == [
        {"role": "user", "content": FIRST},
        {"role": "assistant", "content": replies[0]},
        {"role": "user", "content": observations[1]},
        {"role": "assistant", "content": replies[1]},
        {"role": "user", "content": observations[2]},
    ]


async def test_max_history_turns_keeps_the_system_prompt_the_first_observation_and_the_last_turns(
    chat: ScriptedChatServer, make_agent: MakeAgent, guess_info: EnvInfo
) -> None:
    episode = make_agent(max_history_turns=1).start_episode(TASK, guess_info)
    for n, observation in enumerate([FIRST, "8 is too low.", "12 is too high."]):
        chat.reply(f"Action: guess {n}")
        await episode.act(Observation(text=observation))
    messages = chat.chat_requests[2].messages
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user"]
    assert [m["content"] for m in messages[1:]] == [FIRST, "Action: guess 1", "12 is too high."]


@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        ({"system_prompt": "Play well."}, f"Play well.\n\n{DEFAULT_REACT_INSTRUCTIONS}"),
        ({"system_prompt": "Reply as 'Thought: ... Action: <move>'."}, "Reply as 'Thought: ... Action: <move>'."),
        ({"react_instructions": ""}, "INSTRUCTIONS"),
        ({"action_format": "raw"}, "INSTRUCTIONS"),
        ({"action_format": "raw", "system_prompt": "Be brief."}, "Be brief."),
    ],
    ids=["override gets the format", "override that asks for Action:", "no format", "raw", "raw override"],
)
async def test_the_system_prompt_is_the_override_or_the_env_instructions_plus_the_react_format(
    chat: ScriptedChatServer,
    make_agent: MakeAgent,
    guess_info: EnvInfo,
    settings: dict[str, Any],
    expected: str,
) -> None:
    chat.reply("guess 8")
    await make_agent(**settings).start_episode(TASK, guess_info).act(Observation(text=FIRST))
    system = chat.chat_requests[0].messages[0]
    assert system == {"role": "system", "content": expected.replace("INSTRUCTIONS", guess_info.instructions or "")}


async def test_an_env_without_instructions_in_raw_mode_gets_no_system_message(
    chat: ScriptedChatServer, make_agent: MakeAgent, guess_info: EnvInfo
) -> None:
    bare = guess_info.model_copy(update={"instructions": None})
    chat.reply("guess 8")
    await make_agent(action_format="raw").start_episode(TASK, bare).act(Observation(text=FIRST))
    assert chat.chat_requests[0].messages == [{"role": "user", "content": FIRST}]


async def test_tool_call_mode_sends_the_tools_and_answers_each_call_with_a_tool_message(
    chat: ScriptedChatServer, make_agent: MakeAgent
) -> None:
    episode = make_agent(tool_choice="required").start_episode(TASK, TOOLS_ENV)
    first_calls = [call("call_a", "guess", '{"number": 8}'), call("call_b", "guess", '{"number": 9}')]
    chat.reply("Let me try 8.", tool_calls=[{**c, "index": i} for i, c in enumerate(first_calls)])
    chat.reply(None, tool_calls=[call(None, "guess", '{"number": 12}')], finish_reason="tool_calls")
    chat.reply(None, tool_calls=[call("call_c", "guess", "{}")])

    first = await episode.act(Observation(text="Find the number from 1 to 16."))
    second = await episode.act(Observation(text="8 is too low."))
    await episode.act(Observation(text="12 is too high."))

    assert first.action == ToolCall(name="guess", arguments={"number": 8}) and first.text == "Let me try 8."
    assert second.action == ToolCall(name="guess", arguments={"number": 12}) and second.text is None
    request = chat.chat_requests[0].body
    assert request["tools"] == [{"type": "function", "function": TOOLS_ENV.tools[0]}]  # type: ignore[index]
    assert request["tool_choice"] == "required"
    assert request["messages"][0] == {"role": "system", "content": "Use the tools."}  # no ReAct format here
    assert chat.chat_requests[2].messages[2:] == [
        # only the played call, and only the fields the API defines ("index" is dropped)
        {"role": "assistant", "content": "Let me try 8.", "tool_calls": [first_calls[0]]},
        {"role": "tool", "tool_call_id": "call_a", "content": "8 is too low."},
        {"role": "assistant", "content": None, "tool_calls": [{**call("call_1", "guess", '{"number": 12}')}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "12 is too high."},  # an id made up where none came
    ]


async def test_a_tool_call_written_in_the_text_is_played_and_answered_as_a_user_message(
    chat: ScriptedChatServer, make_agent: MakeAgent
) -> None:
    episode = make_agent().start_episode(TASK, TOOLS_ENV)
    text = '<tool_call>\n{"name": "guess", "arguments": {"number": 8}}\n</tool_call>'
    chat.reply(text)
    chat.reply(None, tool_calls=[call("c", "guess", '{"number": 12}')])
    assert (await episode.act(Observation(text="go"))).action == ToolCall(name="guess", arguments={"number": 8})
    await episode.act(Observation(text="8 is too low."))
    assert chat.chat_requests[1].messages[2:] == [
        {"role": "assistant", "content": text},
        {"role": "user", "content": "8 is too low."},
    ]


async def test_a_tool_mode_reply_without_a_call_is_a_parse_error_with_the_raw_text(
    chat: ScriptedChatServer, make_agent: MakeAgent
) -> None:
    chat.reply("I would rather chat.")
    with pytest.raises(ActionParseError) as caught:
        await make_agent().start_episode(TASK, TOOLS_ENV).act(Observation(text="go"))
    assert caught.value.text == "I would rather chat." and "tool_choice=required" in str(caught.value)


async def test_forcing_tool_calls_on_an_env_without_tools_fails_before_any_request(
    chat: ScriptedChatServer, make_agent: MakeAgent, guess_info: EnvInfo
) -> None:
    with pytest.raises(ConfigError, match=r"advertises none; use agent\.action_format=react"):
        make_agent(action_format="tool_call").start_episode(TASK, guess_info)
    assert chat.requests == []


async def test_a_text_env_can_be_played_with_forced_tool_calls_when_it_has_tools(
    chat: ScriptedChatServer, make_agent: MakeAgent
) -> None:
    text_env = TOOLS_ENV.model_copy(update={"action_format": "text"})
    assert make_agent().mode_for(text_env) == "react"
    assert make_agent(action_format="tool_call").mode_for(text_env) == "tool_call"
    assert make_agent(action_format="react").mode_for(TOOLS_ENV) == "react"


async def test_a_reply_cut_off_at_max_tokens_says_to_raise_it(
    chat: ScriptedChatServer, make_agent: MakeAgent, guess_info: EnvInfo
) -> None:
    chat.reply("Thought: let me consider every number\nfrom one", finish_reason="length")
    with pytest.raises(ActionParseError, match=r"cut off at max_tokens=12: raise agent\.max_tokens"):
        await make_agent(max_tokens=12).start_episode(TASK, guess_info).act(Observation(text=FIRST))


async def test_the_model_is_asked_of_the_server_when_not_set(
    chat: ScriptedChatServer, make_agent: MakeAgent, guess_info: EnvInfo
) -> None:
    chat.models = ["Qwen/Qwen2.5-7B-Instruct"]
    episode = make_agent(model=None).start_episode(TASK, guess_info)
    chat.reply("guess 8")
    chat.reply("guess 12")
    await episode.act(Observation(text=FIRST))
    await episode.act(Observation(text="8 is too low."))
    assert [r.path for r in chat.requests] == ["/v1/models", "/v1/chat/completions", "/v1/chat/completions"]
    assert {r.body["model"] for r in chat.chat_requests} == {"Qwen/Qwen2.5-7B-Instruct"}


async def test_an_unset_model_with_several_served_says_to_choose(
    chat: ScriptedChatServer, make_agent: MakeAgent, guess_info: EnvInfo
) -> None:
    chat.models = ["a", "b"]
    with pytest.raises(ChatServerError, match=r"lists \['a', 'b'\]; pass agent.model=NAME"):
        await make_agent(model=None).start_episode(TASK, guess_info).act(Observation(text=FIRST))


async def test_http_proxy_from_the_environment_carries_the_requests(
    chat: ScriptedChatServer, guess_info: EnvInfo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The scripted server plays the proxy: the model's own host does not exist, so only the proxy can answer."""
    for name in ("http_proxy", "HTTP_PROXY", "no_proxy", "NO_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", chat.url)
    chat.reply("Action: guess 8")
    async with OpenAIAgent(base_url="http://model.invalid:9/v1", model="scripted-model", max_retries=0) as agent:
        reply = await agent.start_episode(TASK, guess_info).act(Observation(text=FIRST))
    assert reply.action == "guess 8"
    assert chat.chat_requests[0].path == "/v1/chat/completions"


def test_no_proxy_names_the_hosts_reached_directly(monkeypatch: pytest.MonkeyPatch) -> None:
    from agenthub_agent_openai.client import env_proxy

    for name in ("http_proxy", "https_proxy", "no_proxy", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.internal:3128")
    monkeypatch.setenv("NO_PROXY", "localhost,vllm.internal")
    assert env_proxy("https://api.openai.com/v1") == "http://proxy.internal:3128"
    assert env_proxy("https://vllm.internal/v1") is None
    assert env_proxy("http://api.openai.com/v1") is None  # no HTTP_PROXY: plain http goes direct
