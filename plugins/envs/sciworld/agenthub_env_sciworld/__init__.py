"""agenthub-env-sciworld: ScienceWorld (``scienceworld`` 1.2.3) as an agenthub environment.

Importing this package stays cheap: no JVM starts and py4j is not imported
until an environment or the oracle is built. ``SciWorldEnv``,
``SciWorldOracle`` and ``ScienceWorldJVM`` are imported lazily from here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agenthub import lazy_exports

__version__ = "0.1.0"

if TYPE_CHECKING:
    from agenthub_env_sciworld.env import SciWorldEnv
    from agenthub_env_sciworld.jvm import ScienceWorldJVM
    from agenthub_env_sciworld.oracle import SciWorldOracle

__getattr__ = lazy_exports(
    __name__,
    {
        "SciWorldEnv": ".env",
        "SciWorldOracle": ".oracle",
        "ScienceWorldJVM": ".jvm",
    },
)

__all__ = ["SciWorldEnv", "SciWorldOracle", "ScienceWorldJVM", "__version__"]
