"""agenthub-env-search: multi-turn search, read and answer (Search-R1 / AgentGym-RL Deep Search)."""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
