"""Registers the ``hf`` agent; imports neither torch nor transformers."""

from __future__ import annotations

from collections.abc import Callable

from agenthub import AgentSpec, hookimpl

from agenthub_agent_hf import __version__


@hookimpl
def agenthub_register_agents(register: Callable[[AgentSpec], None]) -> None:
    register(
        AgentSpec(
            name="hf",
            factory="agenthub_agent_hf.agent:hf_agent",
            description="A local transformers model (agent.model=PATH), token-in/token-out, batched across episodes.",
            version=__version__,
            writes_actions=True,  # a model's reply is the action: it plays any text env
        )
    )
