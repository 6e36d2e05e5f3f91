"""agenthub-env-wordle: LMRL-Gym's Wordle environment for agenthub (env ``wordle``, agent ``wordle-oracle``)."""

from __future__ import annotations

__version__ = "0.1.0"
__all__ = ["__version__"]
