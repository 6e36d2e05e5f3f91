"""``agenthub run --resume RUN_DIR``: the stored config, and the settings a resumed run may change.

Every trainer that resumes in its own run directory checks the same thing: only some settings (more
``steps``, say) may differ from the stored ``config.yaml``; any other difference would make it another run.
A setting the stored config lacks (added to the plugin since the run started) counts as its default.
Secrets are never stored (``<redacted>``, :mod:`agenthub.redaction`): both sides are compared redacted, so
a secret given again, or a new one, is no change.
"""

from __future__ import annotations

from collections.abc import Set
from typing import Any

from pydantic import BaseModel

from agenthub.errors import ConfigError
from agenthub.redaction import redact_secrets
from agenthub.rollout.store import RunStore, write_config


def saved_config(settings: BaseModel) -> dict[str, Any]:
    """The config as the run directory keeps it (``resume`` is how it was started, not what it is; secrets
    are redacted)."""
    return redact_secrets(settings.model_dump(mode="json", exclude={"resume"}))


def defaults(model: type[BaseModel]) -> dict[str, Any]:
    """Each optional setting's default, as the run directory would store it."""
    fields = model.model_fields.items()
    return {name: field.get_default(call_default_factory=True) for name, field in fields if not field.is_required()}


def check_resumable(settings: BaseModel, resume: str, allowed: Set[str]) -> RunStore:
    """The run at ``resume``, if only the ``allowed`` settings differ from its stored config."""
    store = RunStore.existing(resume)
    stored, saved = {**defaults(type(settings)), **store.config()}, saved_config(settings)
    changed = sorted(k for k in {*stored, *saved} if k not in allowed and stored.get(k) != saved.get(k))
    if changed:
        details = ", ".join(f"{k}: {stored.get(k)!r} -> {saved.get(k)!r}" for k in changed)
        may = ", ".join(sorted(set(allowed) - {"resume"}))
        raise ConfigError(
            f"cannot resume {store.path}: its config differs in {details}; only {may} may change on resume. "
            "Start a new run instead"
        )
    return store


def reopen(settings: BaseModel, resume: str, allowed: Set[str]) -> RunStore:
    """The resumed run's store (appended to), its config.yaml updated (e.g. more steps)."""
    check_resumable(settings, resume, allowed)
    store = RunStore.resume(resume)
    write_config(store.path, saved_config(settings))
    return store
