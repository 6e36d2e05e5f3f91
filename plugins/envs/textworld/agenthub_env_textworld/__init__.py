"""agenthub-env-textworld: Microsoft TextWorld's generated games (``textworld`` 1.7.0) as an agenthub environment.

Importing this package stays cheap; TextWorld loads when an environment is
first built. ``TextWorldEnv`` and ``TextWorldOracle`` are imported lazily
from here for convenience.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from agenthub_env_textworld.env import TextWorldEnv
    from agenthub_env_textworld.oracle import TextWorldOracle

_LAZY = {"TextWorldEnv": "agenthub_env_textworld.env", "TextWorldOracle": "agenthub_env_textworld.oracle"}


def __getattr__(name: str) -> Any:
    import importlib

    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'agenthub_env_textworld' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


__all__ = ["TextWorldEnv", "TextWorldOracle", "__version__"]
