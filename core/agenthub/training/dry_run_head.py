"""The head of a trainer's dry run: the resolved settings, then what the run would do with its directory.

Every trainer's ``--dry-run`` starts so: the settings as YAML (secrets redacted), so that the output stays
YAML, then a comment on the run directory: the run it would resume, or the new id each run takes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

import yaml

from agenthub.config import redact_secrets


class RunSettings(Protocol):
    """What :func:`print_dry_run_head` reads of a trainer's settings."""

    @property
    def resume(self) -> object: ...

    @property
    def run_id(self) -> str | None: ...

    def model_dump(self, *, mode: str) -> dict[str, Any]: ...


def print_dry_run_head(settings: RunSettings, run_dir: Path, *, resuming: str | None = None) -> None:
    """The settings as YAML; then, resuming, ``# would resume RUN_DIR`` followed by ``resuming`` (how the
    framework continues; None: no such line), else a note that ``run_dir``'s id is new each run unless
    ``run_id=`` fixes it."""
    print(yaml.safe_dump(redact_secrets(settings.model_dump(mode="json")), sort_keys=False).rstrip())
    if settings.resume is not None:
        if resuming is not None:
            print(f"# would resume {run_dir}{resuming}")
    elif settings.run_id is None:
        print(f"# run directory {run_dir}: a new id each run (run_id= fixes it)")
