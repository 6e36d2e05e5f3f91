"""BabyAI for agenthub: minigrid's BabyAI levels as text, with AgentGym's actions and task ids.

Importing this package is cheap; minigrid loads only when an environment or
the oracle is built (see :mod:`agenthub_env_babyai.env`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agenthub import lazy_exports

__version__ = "0.1.0"

if TYPE_CHECKING:
    from agenthub_env_babyai.levels import LEVELS, SPLITS, level_of

__getattr__ = lazy_exports(
    __name__,
    {
        "LEVELS": ".levels",
        "SPLITS": ".levels",
        "level_of": ".levels",
    },
)

__all__ = ["LEVELS", "SPLITS", "__version__", "level_of"]
