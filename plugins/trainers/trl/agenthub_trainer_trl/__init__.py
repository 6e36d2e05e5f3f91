"""agenthub's TRL trainer: ``GRPOTrainer`` whose rollout is the hub executor, and ``SFTTrainer``.

``agenthub run trainer=trl env=NAME [model=PATH]``; without ``model`` a tiny
random model is built in the run directory, so it runs on a fresh CPU machine.
Heavy modules (torch, transformers, trl) load only when a run starts.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
