"""agenthub-env-textworld: Microsoft TextWorld's generated games (``textworld`` 1.7.0) as an agenthub environment.

Importing this package stays cheap; TextWorld loads when an environment is
first built. ``TextWorldEnv`` and ``TextWorldOracle`` are imported lazily
from here for convenience.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agenthub import lazy_exports

__version__ = "0.1.0"

if TYPE_CHECKING:
    from agenthub_env_textworld.env import TextWorldEnv
    from agenthub_env_textworld.oracle import TextWorldOracle

__getattr__ = lazy_exports(
    __name__,
    {
        "TextWorldEnv": ".env",
        "TextWorldOracle": ".oracle",
    },
)

__all__ = ["TextWorldEnv", "TextWorldOracle", "__version__"]
