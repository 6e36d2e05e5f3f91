"""The run directory on ``agenthub run --resume RUN_DIR``: the stored config, and what may change in it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agenthub.rollout import RunStore
from agenthub.training import resumption

from agenthub_trainer_areal.config import ArealConfig

RESUMABLE_CHANGES = frozenset({"steps", "save_steps", "resume", "backend", "address"})
"""Settings a resumed run may change; any other difference would make it a different run."""


def saved_config(settings: ArealConfig) -> dict[str, Any]:
    """The config as the run directory keeps it (``resume`` is how it was started, not what it is)."""
    return resumption.saved_config(settings)


def check_resumable(settings: ArealConfig) -> Path:
    """The run directory ``resume`` names, if only ``RESUMABLE_CHANGES`` differ from its stored config."""
    assert settings.resume is not None
    return resumption.check_resumable(settings, settings.resume, RESUMABLE_CHANGES).path


def reopen(settings: ArealConfig) -> RunStore:
    """The resumed run's store (appended to), its config.yaml updated (e.g. more steps)."""
    assert settings.resume is not None
    return resumption.reopen(settings, settings.resume, RESUMABLE_CHANGES)
