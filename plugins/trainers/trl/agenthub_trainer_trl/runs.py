"""What GRPO and SFT runs share: the run directory, the model to start from, the device."""

from __future__ import annotations

import contextlib
import dataclasses
import re
from pathlib import Path
from typing import Any

import yaml
from agenthub import ConfigError
from agenthub.config import redact_secrets
from agenthub.rollout import CONFIG_FILE, RunStore

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


def saved_config(config: TrlConfig) -> dict[str, Any]:
    """The config as the run directory keeps it (``resume`` is how it was started, not what it is)."""
    return redact_secrets(config.model_dump(mode="json", exclude={"resume"}))  # no secret on disk


def open_run(config: TrlConfig) -> tuple[RunStore, str]:
    """A new run directory, or the one named by ``resume``; and the suffix that keeps episode keys unique.

    On resume only the settings in ``RESUMABLE_CHANGES`` (e.g. ``steps``) may differ from the stored ones.
    """
    saved = saved_config(config)
    if config.resume is None:
        return RunStore.create(saved, root=config.runs_dir, run_id=config.run_id), ""
    stored = RunStore.existing(config.resume).config()
    # A setting added to the plugin since the run started is absent from its config: it counts as the
    # default that config resolves to, not as a change (so runs made before a new setting still resume).
    # (a config this version cannot read is compared as stored, so the difference is named below)
    with contextlib.suppress(ValueError):
        stored = {**saved_config(TrlConfig.model_validate(stored)), **stored}
    changed = sorted(k for k in {*stored, *saved} if k not in RESUMABLE_CHANGES and stored.get(k) != saved.get(k))
    if changed:
        details = ", ".join(f"{k}: {stored.get(k)!r} -> {saved.get(k)!r}" for k in changed)
        raise ConfigError(
            f"cannot resume {config.resume}: its config differs in {details}; only "
            f"{', '.join(sorted(RESUMABLE_CHANGES - {'resume'}))} may change on resume. Start a new run instead"
        )
    store = RunStore.resume(config.resume)
    (store.path / CONFIG_FILE).write_text(yaml.safe_dump(saved, sort_keys=True))  # e.g. more steps
    segments = [int(m.group(1)) for key in store.completed_keys() if (m := _SEGMENT.search(key))]
    return store, f"@r{max(segments, default=0) + 1}"


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
