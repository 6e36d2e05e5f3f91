"""BabyAI for agenthub: minigrid's BabyAI levels as text, with AgentGym's actions and task ids.

Importing this package is cheap; minigrid loads only when an environment or
the oracle is built (see :mod:`agenthub_env_babyai.env`).
"""

from agenthub_env_babyai.levels import LEVELS, SPLITS, level_of

__version__ = "0.1.0"

__all__ = ["LEVELS", "SPLITS", "__version__", "level_of"]
