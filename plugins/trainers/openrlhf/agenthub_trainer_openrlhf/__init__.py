"""agenthub's OpenRLHF trainer: OpenRLHF's PPO/GRPO whose rollout is the hub executor.

``agenthub run trainer=openrlhf env=NAME model=PATH`` writes OpenRLHF's launch
(the prompt data built from the env's task ids, the settings the agent module
reads) and starts ``python -m openrlhf.cli.train_ppo_ray`` with
``--train.agent_func_path`` pointing at :mod:`agenthub_trainer_openrlhf.agent_func`.
Inside OpenRLHF's vLLM actors, :class:`~agenthub_trainer_openrlhf.agent.HubAgentExecutor`
plays one episode per call, token-in/token-out through OpenRLHF's own vLLM engine.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
