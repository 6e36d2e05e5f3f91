"""The run directory on ``agenthub run --resume RUN_DIR``: the stored config, what may change, the last checkpoint."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agenthub import ConfigError
from agenthub.rollout import RunStore
from agenthub.training import resumption

from agenthub_trainer_swift.config import SwiftConfig
from agenthub_trainer_swift.launch import SWIFT_OUTPUT_DIR

RESUMABLE_CHANGES = frozenset({"steps", "resume", "backend", "address"})
"""Settings a resumed run may change; any other difference would make it a different run. ``backend`` and
``address`` only say where the env servers run: a resumed run starts its own and writes their URLs anew."""


def saved_config(settings: SwiftConfig) -> dict[str, Any]:
    """The config as the run directory keeps it (``resume`` is how it was started, not what it is)."""
    return resumption.saved_config(settings)


def check_resumable(settings: SwiftConfig) -> Path:
    """The run directory ``resume`` names, if only ``RESUMABLE_CHANGES`` differ from its stored config."""
    assert settings.resume is not None
    return resumption.check_resumable(settings, settings.resume, RESUMABLE_CHANGES).path


def reopen(settings: SwiftConfig) -> RunStore:
    """The resumed run's store (appended to), its config.yaml updated (e.g. more steps)."""
    assert settings.resume is not None
    return resumption.reopen(settings, settings.resume, RESUMABLE_CHANGES)


def last_checkpoint(run_dir: Path) -> Path:
    """swift's latest ``checkpoint-N`` in the run's output directory, which ``--resume_from_checkpoint`` loads."""
    from transformers.trainer_utils import get_last_checkpoint

    output = run_dir / SWIFT_OUTPUT_DIR
    found = get_last_checkpoint(str(output)) if output.is_dir() else None
    if found is None:
        raise ConfigError(
            f"cannot resume {run_dir}: swift saved no checkpoint in {output} (on a CPU the plugin passes "
            "--save_strategy no; to make a run resumable pass swift.save_strategy=steps swift.save_steps=N). "
            "Start a new run instead"
        )
    return Path(found).absolute()
