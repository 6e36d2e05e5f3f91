"""The ``openai`` agent: one chat conversation per episode with any OpenAI-compatible server.

The conversation is the system prompt, the first observation as a user
message, then the model's replies and the env's answers in turn. In
``tool_call`` mode the env's answer to a tool call goes back as a ``tool``
message with the call's id; otherwise as a user message.
"""

from __future__ import annotations

import json
import logging
import os
import re
from typing import Any, Literal

from agenthub import AgentReply, ConfigError, EnvInfo, Observation, Task, TokenTrace, ToolCall

from agenthub_agent_openai import __version__
from agenthub_agent_openai.actions import parse_raw, parse_react, tool_call_from_message, tool_call_from_text
from agenthub_agent_openai.client import ChatCompletionsClient
from agenthub_agent_openai.completion import Completion, read_completion
from agenthub_agent_openai.errors import ActionParseError, ChatReplyError
from agenthub_agent_openai.settings import OpenAISettings, describe_settings, load_settings

log = logging.getLogger("agenthub.agent.openai")

_CONVENTIONAL_NAME = re.compile(r"^[A-Z_][A-Z0-9_]*$")

Message = dict[str, Any]
Mode = Literal["tool_call", "react", "raw"]


class OpenAIAgent:
    """Plays any env through a chat-completions server.

    Example::

        agent = OpenAIAgent(base_url="http://localhost:8000/v1", model="Qwen/Qwen2.5-7B-Instruct", temperature=0.7)
        trajectories = await Executor(pool, agent).run(episode_requests(tasks, samples=8))
        await agent.aclose()

    Settings are the fields of :class:`OpenAISettings`, as keyword arguments
    or as ``settings=``; a wrong one raises ``ConfigError`` naming it.
    """

    def __init__(self, settings: OpenAISettings | None = None, **overrides: Any) -> None:
        self.settings = load_settings(settings, **overrides)
        api_key = os.environ.get(self.settings.api_key_env or "") or None
        named = "api_key_env" in self.settings.model_fields_set
        if named and self.settings.api_key_env and api_key is None:
            # Shown only if it looks like a variable name: a key given by mistake must not be echoed.
            name = self.settings.api_key_env if _CONVENTIONAL_NAME.match(self.settings.api_key_env) else "NAME"
            raise ConfigError(
                f"api_key_env names an environment variable ({name}) that is not set or empty; "
                f"export {name}=<your key>, or pass api_key_env=null for a server without keys"
            )
        self.client = ChatCompletionsClient(self.settings, api_key)

    def __repr__(self) -> str:
        return f"OpenAIAgent(base_url={self.settings.base_url!r}, model={self.settings.model!r})"

    def describe(self) -> dict[str, Any]:
        """Provenance for the run store (the executor calls this); holds no key."""
        return {"agent": "openai", "agent_version": __version__, "openai": describe_settings(self.settings)}

    def mode_for(self, env: EnvInfo) -> Mode:
        """The action format this agent plays ``env`` with."""
        chosen = self.settings.action_format
        if chosen == "auto":
            return "tool_call" if env.action_format == "tool_call" else "react"
        return chosen

    def start_episode(self, task: Task, env: EnvInfo) -> OpenAIEpisode:
        mode = self.mode_for(env)
        tools = _function_tools(env.tools) if mode == "tool_call" else None
        if mode == "tool_call" and not tools:
            raise ConfigError(
                f"action_format=tool_call needs the env's tools, but env {env.name!r} advertises none; "
                "use agent.action_format=react (or raw) for a text env"
            )
        return OpenAIEpisode(self, mode, self.system_prompt(env, mode), tools)

    def system_prompt(self, env: EnvInfo, mode: Mode) -> str | None:
        """The ``system_prompt`` setting, else the env's instructions; in react mode with the format appended."""
        prompt = self.settings.system_prompt if self.settings.system_prompt is not None else env.instructions
        hint = self.settings.react_instructions.strip()
        if mode == "react" and hint and "action:" not in (prompt or "").lower():
            prompt = f"{prompt.rstrip()}\n\n{hint}" if prompt and prompt.strip() else hint
        return prompt if prompt and prompt.strip() else None

    async def aclose(self) -> None:
        """Close the HTTP connections (those of the running event loop)."""
        await self.client.aclose()

    async def __aenter__(self) -> OpenAIAgent:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class OpenAIEpisode:
    """One episode's conversation; ``act`` sends it and reads back the next action."""

    def __init__(self, agent: OpenAIAgent, mode: Mode, system_prompt: str | None, tools: list[Message] | None) -> None:
        self.agent = agent
        self.mode = mode
        self.tools = tools
        self.head: list[Message] = [{"role": "system", "content": system_prompt}] if system_prompt else []
        self.first: Message | None = None
        self.turns: list[list[Message]] = []
        """Each turn: the model's message, then the env's answer to it."""
        self._pending: Message | None = None
        self._pending_call_id: str | None = None
        self._trace: TokenTrace | None = None
        self._trace_broken = False

    @property
    def messages(self) -> list[Message]:
        """The conversation as the next request sends it (with the history window applied)."""
        window = self.agent.settings.max_history_turns
        kept = self.turns[-window:] if window else self.turns
        return [*self.head, *([self.first] if self.first else []), *(m for turn in kept for m in turn)]

    @property
    def token_trace(self) -> TokenTrace | None:
        """The episode in tokens, when the server returned prompt and sampled token ids every turn and each
        turn's prompt extended the last exactly (see the README); read by the executor for trainers."""
        return None if self._trace_broken else self._trace

    async def act(self, observation: Observation) -> AgentReply:
        self._add_observation(observation.text)
        settings = self.agent.settings
        body: dict[str, Any] = {"model": await self.agent.client.model(), "messages": self.messages}
        body.update(settings.sampling())
        if self.tools is not None:
            body["tools"] = self.tools
            body["tool_choice"] = settings.tool_choice
        if settings.logprobs:
            body["logprobs"] = True
            if settings.return_token_ids is not False:
                body["return_token_ids"] = True
        body.update(settings.extra_body)
        completion = read_completion(await self.agent.client.complete(body))
        reply = self._reply(completion)
        self._track_tokens(completion)
        return reply

    def _add_observation(self, text: str) -> None:
        if self.first is None:
            self.first = {"role": "user", "content": text}
            return
        if self._pending is None:
            raise ChatReplyError("act() was called again after a failed turn; start a new episode instead")
        if self._pending_call_id is not None:
            answer = {"role": "tool", "tool_call_id": self._pending_call_id, "content": text}
        else:
            answer = {"role": "user", "content": text}
        self.turns.append([self._pending, answer])
        self._pending, self._pending_call_id = None, None

    def _reply(self, completion: Completion) -> AgentReply:
        text = completion.content
        hint = _length_hint(completion, self.agent.settings.max_tokens)
        try:
            action = self._action(completion)
        except ActionParseError as exc:
            if hint:
                raise ActionParseError(exc.problem, exc.text, hint=hint) from None
            raise
        if self.agent.settings.logprobs and completion.logprobs is None:
            raise ChatReplyError(
                "logprobs=true but the server returned no choices[0].logprobs.content; "
                "it does not support logprobs: set agent.logprobs=false"
            )
        return AgentReply(
            action=action,
            text=text,
            token_ids=completion.token_ids if self.agent.settings.logprobs else None,
            logprobs=completion.logprobs if self.agent.settings.logprobs else None,
        )

    def _action(self, completion: Completion) -> str | ToolCall:
        text = completion.content
        if self.mode == "react":
            action: str | ToolCall = parse_react(text)
        elif self.mode == "raw":
            action = parse_raw(text)
        elif completion.tool_calls:
            call = completion.tool_calls[0]
            tool_call = tool_call_from_message(call, text)
            call_id = str(call.get("id") or f"call_{len(self.turns)}")
            # Echo only the call the env will answer (each tool_call_id needs its own tool message), and only
            # the fields the API defines: a strict server refuses extras such as a streaming "index".
            written = call["function"].get("arguments")
            arguments = written if isinstance(written, str) and written.strip() else json.dumps(tool_call.arguments)
            function = {"name": tool_call.name, "arguments": arguments}
            self._pending = {
                "role": "assistant",
                "content": text,
                "tool_calls": [{"id": call_id, "type": "function", "function": function}],
            }
            self._pending_call_id = call_id
            if len(completion.tool_calls) > 1:
                log.warning(
                    "the model made %d tool calls at once; only the first is played", len(completion.tool_calls)
                )
            return tool_call
        else:
            found = tool_call_from_text(text)
            if found is None:
                raise ActionParseError(
                    "the reply has no tool call",
                    text,
                    hint="Use tool_choice=required if the server supports it, or check its tool-call parser "
                    "(vLLM: --enable-auto-tool-choice --tool-call-parser NAME)",
                )
            action = found
        self._pending = {"role": "assistant", "content": text or ""}
        return action

    def _track_tokens(self, completion: Completion) -> None:
        """Extend the token trace; abandon it for the episode at the first turn that does not extend it."""
        if self._trace_broken or not self.agent.settings.logprobs:
            return
        prompt, sampled, logprobs = completion.prompt_token_ids, completion.token_ids, completion.logprobs
        if prompt is None or sampled is None or logprobs is None:
            self._trace_broken = True
            return
        if self._trace is None:
            self._trace = TokenTrace(prompt_ids=prompt)
        else:
            context = [*self._trace.prompt_ids, *self._trace.response_ids]
            if prompt[: len(context)] != context:
                self._trace_broken = True
                log.warning(
                    "no token trace for this episode: the server's prompt for turn %d does not start with the "
                    "tokens of the turns before it (the chat template re-renders the history, or "
                    "max_history_turns cut it); the replies' token_ids and logprobs are still recorded",
                    len(self.turns) + 1,
                )
                return
            between = prompt[len(context) :]
            self._trace.response_ids.extend(between)
            self._trace.response_mask.extend([0] * len(between))
            self._trace.logprobs.extend([0.0] * len(between))
        self._trace.response_ids.extend(sampled)
        self._trace.response_mask.extend([1] * len(sampled))
        self._trace.logprobs.extend(logprobs)


def _function_tools(tools: list[dict[str, Any]] | None) -> list[Message] | None:
    """The env's tools as OpenAI ``tools`` entries; bare function schemas are wrapped."""
    if not tools:
        return None
    return [t if "type" in t else {"type": "function", "function": t} for t in tools]


def _length_hint(completion: Completion, max_tokens: int | None) -> str:
    if completion.finish_reason != "length":
        return ""
    limit = f"max_tokens={max_tokens}" if max_tokens else "the server's length limit"
    return f"The reply was cut off at {limit}: raise agent.max_tokens"
