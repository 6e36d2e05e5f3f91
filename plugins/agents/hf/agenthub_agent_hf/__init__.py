"""agenthub-agent-hf: a local transformers model as a token-level agenthub policy (agent ``hf``).

Importing this package is cheap; ``torch`` and ``transformers`` load when a
model is built.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from agenthub_agent_hf.agent import HFAgentSettings, HFPolicy, hf_agent
    from agenthub_agent_hf.generator import BatchStats, HFGenerator
    from agenthub_agent_hf.loading import LoadedModel, ModelLoadError, load_model

_LAZY = {
    "HFAgentSettings": "agenthub_agent_hf.agent",
    "HFPolicy": "agenthub_agent_hf.agent",
    "hf_agent": "agenthub_agent_hf.agent",
    "BatchStats": "agenthub_agent_hf.generator",
    "HFGenerator": "agenthub_agent_hf.generator",
    "LoadedModel": "agenthub_agent_hf.loading",
    "ModelLoadError": "agenthub_agent_hf.loading",
    "load_model": "agenthub_agent_hf.loading",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'agenthub_agent_hf' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


__all__ = [
    "BatchStats",
    "HFAgentSettings",
    "HFGenerator",
    "HFPolicy",
    "LoadedModel",
    "ModelLoadError",
    "__version__",
    "hf_agent",
    "load_model",
]
