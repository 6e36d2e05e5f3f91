"""``agenthub run --resume RUN_DIR``: the stored config, and the settings a resumed run may change.

Every trainer that resumes in its own run directory checks the same thing: only some settings (more
``steps``, say) may differ from the stored ``config.yaml``; any other difference would make it another run.
A setting the stored config lacks (added to the plugin since the run started) counts as its default.
Secrets are never stored (``<redacted>``, :mod:`agenthub.redaction`): both sides are compared redacted, so
a secret given again, or a new one, is no change.

:func:`open_run` is what a trainer calls: a new run directory, or (``resume`` set) the checked, reopened one.
:func:`rewind` drops what a stopped run wrote after the checkpoint it resumes from, so a resumed run writes
each step once.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Mapping, Set
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from agenthub.errors import ConfigError
from agenthub.redaction import redact_secrets
from agenthub.rollout.store import METRICS_FILE, TRAJECTORIES_FILE, RunStore, new_run_id, write_config


def saved_config(settings: BaseModel) -> dict[str, Any]:
    """The config as the run directory keeps it (``resume`` is how it was started, not what it is; secrets
    are redacted)."""
    return redact_secrets(settings.model_dump(mode="json", exclude={"resume"}))


def defaults(model: type[BaseModel]) -> dict[str, Any]:
    """Each optional setting's default, as the run directory would store it."""
    fields = model.model_fields.items()
    return {name: field.get_default(call_default_factory=True) for name, field in fields if not field.is_required()}


def resolved(model: type[BaseModel], stored: Mapping[str, Any]) -> dict[str, Any]:
    """``stored`` with each setting it lacks (added to the plugin since the run started) as its default.

    The default is what ``stored`` resolves to (a default may follow other settings, e.g. one for the
    built-in tiny model and another for a given model); a config this version cannot read falls back to
    each field's plain default, so the difference is named by the caller.
    """
    with contextlib.suppress(ValueError):
        return {**saved_config(model.model_validate(dict(stored))), **stored}
    return {**defaults(model), **stored}


def check_resumable(settings: BaseModel, resume: str, allowed: Set[str]) -> RunStore:
    """The run at ``resume``, if only the ``allowed`` settings differ from its stored config."""
    store = RunStore.existing(resume)
    stored, saved = resolved(type(settings), store.config()), saved_config(settings)
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


def open_run(settings: BaseModel, allowed: Set[str], *, root: str | Path, run_id: str | None = None) -> RunStore:
    """The run's store: a new directory under ``root`` (named ``run_id``, else a fresh id), or, when
    ``settings.resume`` names a run, that run reopened if only the ``allowed`` settings changed."""
    resume: str | None = getattr(settings, "resume", None)
    if resume is not None:
        return reopen(settings, resume, allowed)
    return RunStore.create(saved_config(settings), root=root, run_id=run_id)


def planned_run_dir(settings: BaseModel, allowed: Set[str], *, root: str | Path, run_id: str | None = None) -> Path:
    """Where :func:`open_run` would put the run, for a dry run (it writes nothing): the checked run
    ``settings.resume`` names, else ``root``/``run_id`` (a fresh id when ``run_id`` is None)."""
    resume: str | None = getattr(settings, "resume", None)
    if resume is not None:
        return check_resumable(settings, resume, allowed).path
    return Path(root) / (run_id or new_run_id())


def rewind(
    store: RunStore,
    *,
    keep_metric: Callable[[Mapping[str, Any]], bool],
    keep_trajectory: Callable[[Mapping[str, Any]], bool],
) -> None:
    """Keep only the metrics records and stored episodes (as JSON objects) the predicates accept.

    A run stopped in step N+1 after its checkpoint at step N has logged that step (and maybe episodes of
    the next); resuming from the checkpoint plays them again. Each file is rewritten whole and swapped in
    (a kill leaves the old one or the new one, never half of either).
    """
    _filter_lines(store.path / METRICS_FILE, keep_metric)
    _filter_lines(store.path / TRAJECTORIES_FILE, keep_trajectory)


def _filter_lines(file: Path, keep: Callable[[Mapping[str, Any]], bool]) -> None:
    if not file.exists():
        return
    lines = file.read_bytes().splitlines(keepends=True)
    # a last line a kill left half-written has no newline: it is dropped, as RunStore.resume does
    kept = [line for line in lines if line.endswith(b"\n") and line.strip() and keep(json.loads(line))]
    if len(kept) == len(lines):
        return
    tmp = file.with_name(file.name + ".tmp")
    tmp.write_bytes(b"".join(kept))
    os.replace(tmp, file)
