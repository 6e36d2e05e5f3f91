"""agenthub-env-maze: LMRL-Gym's maze environment for agenthub (env ``maze``, agent ``maze-oracle``)."""

from __future__ import annotations

__version__ = "0.1.0"
__all__ = ["__version__"]
