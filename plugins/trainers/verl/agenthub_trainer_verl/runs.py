"""The run directory on ``agenthub run --resume RUN_DIR``: the stored config, and what may change in it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from agenthub.errors import ConfigError
from agenthub.rollout.store import CONFIG_FILE, RunStore

from agenthub_trainer_verl.config import VerlConfig

RESUMABLE_CHANGES = frozenset({"steps", "save_freq", "resume"})
"""Settings a resumed run may change; any other difference would make it a different run."""


def saved_config(settings: VerlConfig) -> dict[str, Any]:
    """The config as the run directory keeps it (``resume`` is how it was started, not what it is)."""
    return settings.model_dump(mode="json", exclude={"resume"})


def defaults(model: type[VerlConfig]) -> dict[str, Any]:
    """Each optional setting's default, as the run directory would store it."""
    fields = model.model_fields.items()
    return {name: field.get_default(call_default_factory=True) for name, field in fields if not field.is_required()}


def check_resumable(settings: VerlConfig) -> Path:
    """The run directory ``resume`` names, if only ``RESUMABLE_CHANGES`` differ from its stored config."""
    assert settings.resume is not None
    store = RunStore.existing(settings.resume)
    # A setting the stored config lacks (added to the plugin since) counts as its default.
    stored, saved = {**defaults(VerlConfig), **store.config()}, saved_config(settings)
    changed = sorted(k for k in {*stored, *saved} if k not in RESUMABLE_CHANGES and stored.get(k) != saved.get(k))
    if changed:
        details = ", ".join(f"{k}: {stored.get(k)!r} -> {saved.get(k)!r}" for k in changed)
        allowed = ", ".join(sorted(RESUMABLE_CHANGES - {"resume"}))
        raise ConfigError(
            f"cannot resume {store.path}: its config differs in {details}; only {allowed} may change on resume. "
            "Start a new run instead"
        )
    return store.path


def reopen(settings: VerlConfig) -> RunStore:
    """The resumed run's store, its config.yaml updated (e.g. more steps)."""
    check_resumable(settings)
    assert settings.resume is not None
    store = RunStore.resume(settings.resume)
    (store.path / CONFIG_FILE).write_text(yaml.safe_dump(saved_config(settings), sort_keys=True))
    return store
