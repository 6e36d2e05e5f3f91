"""What GRPO and SFT runs share: the run directory, the model to start from, the device."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agenthub import ConfigError
from agenthub.rollout import RunStore
from agenthub.training import resumption

from agenthub_trainer_trl.config import RESUMABLE_CHANGES, TINY_MODEL_DEFAULTS, TrlConfig

CHECKPOINTS_DIR = "checkpoints"
TINY_MODEL_DIR = "tiny-model"
FINAL_MODEL_DIR = "model"
TENSORBOARD_DIR = "tensorboard"


def cpu_settings(args_class: type) -> dict[str, Any]:
    """On a CPU, bf16 autocast is emulated and activation checkpointing recomputes: both only cost time there.

    Recent transformers call ``gradient_checkpointing`` ``activation_checkpointing`` (the old name warns).
    """
    names = {f.name for f in dataclasses.fields(args_class)}
    checkpointing = "activation_checkpointing" if "activation_checkpointing" in names else "gradient_checkpointing"
    return {"use_cpu": True, "bf16": False, checkpointing: False}


_SEGMENT = re.compile(r"@r(\d+)$")


def open_run(config: TrlConfig) -> tuple[RunStore, str]:
    """A new run directory, or the one named by ``resume``; and the suffix that keeps episode keys unique.

    On resume only the settings in ``RESUMABLE_CHANGES`` (e.g. ``steps``) may differ from the stored ones,
    and what the stopped run wrote after its last checkpoint is dropped: training goes on from that
    checkpoint, so each step is written once.
    """
    if config.resume is None:
        return resumption.open_run(config, RESUMABLE_CHANGES, root=config.runs_dir, run_id=config.run_id), ""
    store = resumption.reopen(config, config.resume, RESUMABLE_CHANGES)
    rewind_to_checkpoint(store.path)
    segments = [int(m.group(1)) for key in store.completed_keys() if (m := _SEGMENT.search(key))]
    return store, f"@r{max(segments, default=0) + 1}"


def checkpoint_step(checkpoint: str | None) -> int:
    """The optimizer steps done at ``checkpoint`` (``checkpoint-N``); 0 without one: training starts over."""
    return int(Path(checkpoint).name.rsplit("-", 1)[1]) if checkpoint is not None else 0


def rewind_to_checkpoint(run_dir: Path) -> None:
    """Drop the metrics (jsonl and csv) of steps after the last checkpoint, and the episodes played for them.

    A step's metrics carry the optimizer steps done (``step`` N+1 for the step that starts at N); its
    episodes' keys start with the steps done before it (``N/...``, see ``HubRollout``).
    """
    from agenthub_trainer_trl.metrics import CSV_FILE, rewind_csv  # imports transformers: only on resume

    done = checkpoint_step(last_checkpoint(run_dir))

    def played_before(trajectory: Mapping[str, Any]) -> bool:
        head = str(trajectory.get("key") or "").split("/", 1)[0]
        return not head.isdigit() or int(head) < done

    resumption.rewind(
        RunStore.existing(run_dir),
        keep_metric=lambda record: int(record.get("step", 0)) <= done,
        keep_trajectory=played_before,
    )
    rewind_csv(run_dir / CSV_FILE, done)


def model_path(config: TrlConfig, run_dir: Path) -> str:
    """``model`` as given, or the tiny random model built (once) in the run directory."""
    if config.model is not None:
        return config.model
    path = run_dir / TINY_MODEL_DIR
    if not (path / "config.json").exists():
        from agenthub.testing import build_tiny_model

        try:
            build_tiny_model(path, **{"seed": config.seed, **TINY_MODEL_DEFAULTS, **config.tiny_model})
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"tiny_model settings {config.tiny_model} were rejected: {exc}") from None
    return str(path)


def last_checkpoint(run_dir: Path) -> str | None:
    from transformers.trainer_utils import get_last_checkpoint

    directory = run_dir / CHECKPOINTS_DIR
    return get_last_checkpoint(str(directory)) if directory.is_dir() else None


def quiet_framework() -> None:
    """No progress bar per weight load or checkpoint shard, and each framework warning once, not per checkpoint.

    transformers re-issues some deprecation warnings from code the user does not control (e.g. its own
    ``is_gradient_checkpointing`` at every save): shown once they still say what changes; repeated, they
    bury the step lines.
    """
    import warnings

    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    for category in (FutureWarning, UserWarning):
        warnings.filterwarnings("once", category=category)
    # TRL 1.16 reads this deprecated property at every checkpoint; nothing a user can change.
    warnings.filterwarnings("ignore", message="`is_gradient_checkpointing` is deprecated", category=FutureWarning)


def on_cpu() -> bool:
    import torch

    return not torch.cuda.is_available()
