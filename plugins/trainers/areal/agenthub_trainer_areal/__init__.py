"""agenthub's AReaL trainer: AReaL's asynchronous GRPO whose ``RolloutWorkflow`` is the hub executor.

``agenthub run trainer=areal env=NAME model=PATH`` writes AReaL's experiment
YAML and a small entry script into the run directory and starts it;
:class:`~agenthub_trainer_areal.workflow.HubWorkflow` is the workflow AReaL
calls for every episode. AReaL (and torch) load only when they are used.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
