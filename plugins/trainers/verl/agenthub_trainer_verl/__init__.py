"""agenthub's verl trainer: verl's PPO/GRPO with its agent loop replaced by the hub executor.

``agenthub run trainer=verl env=NAME model=PATH`` writes the training parquet
(one row per env task), the agent-loop YAML that names
:class:`~agenthub_trainer_verl.agent_loop.AgenthubAgentLoop`, and starts
``python -m verl.trainer.main_ppo`` with hydra overrides. verl, torch and
transformers load only inside verl's own processes, never at registration.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
