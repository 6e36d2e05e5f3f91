"""agenthub-agent-hf: a local transformers model as a token-level agenthub policy (agent ``hf``).

Importing this package is cheap; ``torch`` and ``transformers`` load when a
model is built.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agenthub import lazy_exports

__version__ = "0.1.0"

if TYPE_CHECKING:
    from agenthub_agent_hf.agent import HFAgentSettings, HFPolicy, hf_agent
    from agenthub_agent_hf.generator import BatchStats, HFGenerator
    from agenthub_agent_hf.loading import LoadedModel, ModelLoadError, load_model

__getattr__ = lazy_exports(
    __name__,
    {
        "HFAgentSettings": ".agent",
        "HFPolicy": ".agent",
        "hf_agent": ".agent",
        "BatchStats": ".generator",
        "HFGenerator": ".generator",
        "LoadedModel": ".loading",
        "ModelLoadError": ".loading",
        "load_model": ".loading",
    },
)

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
