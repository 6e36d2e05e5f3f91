"""Registers the ``openai`` agent; imports neither aiohttp nor the agent until it is used."""

from __future__ import annotations

from collections.abc import Callable

from agenthub import AgentSpec, hookimpl

from agenthub_agent_openai import __version__


@hookimpl
def agenthub_register_agents(register: Callable[[AgentSpec], None]) -> None:
    register(
        AgentSpec(
            name="openai",
            factory="agenthub_agent_openai.agent:OpenAIAgent",
            description="Any OpenAI-compatible chat-completions server (vLLM, SGLang, llama.cpp, hosted APIs).",
            version=__version__,
            writes_actions=True,  # a model's reply is the action: it plays any text env
        )
    )
