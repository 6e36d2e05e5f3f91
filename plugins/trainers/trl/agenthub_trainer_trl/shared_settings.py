"""What a TRL run gives its trainer's arguments alike, GRPO (``GRPOConfig``) or SFT (``SFTConfig``).

Logging, checkpoints and the seed come from the run's settings; no experiment tracker is reported to
(the run store and the learning curve are the record); on a CPU, the settings that only cost time there.
"""

from __future__ import annotations

from typing import Any

from agenthub_trainer_trl.config import TrlConfig
from agenthub_trainer_trl.runs import cpu_settings, on_cpu


def shared_settings(config: TrlConfig, args_class: type) -> dict[str, Any]:
    """The arguments of ``args_class`` (TRL's ``GRPOConfig`` or ``SFTConfig``) that both modes set the same way."""
    return {
        "logging_steps": config.logging_steps,
        "save_strategy": "steps",
        "save_steps": config.save_steps,
        "save_total_limit": config.save_total_limit,
        "seed": config.seed,
        "report_to": [],
        **(cpu_settings(args_class) if on_cpu() else {}),
    }
