"""The file ``--train.agent_func_path`` names: OpenRLHF loads it by path and builds ``AgentExecutor()``.

OpenRLHF 0.11 (``openrlhf/trainer/ray/vllm_engine.py``) requires a ``.py`` file
with a class ``AgentExecutor`` that subclasses ``AgentExecutorBase``; this one
is the installed package's :class:`~agenthub_trainer_openrlhf.agent.HubAgentExecutor`,
which reads its settings from ``AGENTHUB_OPENRLHF_SETTINGS``.
"""

from __future__ import annotations

from agenthub_trainer_openrlhf.agent import HubAgentExecutor as AgentExecutor

__all__ = ["AgentExecutor"]
