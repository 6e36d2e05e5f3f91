"""agenthub's ms-swift trainer: a ``MultiTurnScheduler`` whose episodes are agenthub env sessions.

``agenthub run trainer=swift env=NAME [model=PATH]`` writes the ``swift rlhf
--rlhf_type grpo`` launch (dataset, scheduler settings, command line) and
starts it; swift imports :mod:`agenthub_trainer_swift.swift_plugin` through
``--external_plugins``, which registers the ``agenthub`` scheduler and the
``agenthub_env_reward`` reward. This package never imports swift at import time.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
