"""The ``Trainer`` protocol's ``run`` for a trainer that writes a framework's launch files and starts it.

Each such trainer validates its settings and refuses at once what does not fit the env; then it prints its
dry run, or runs the checks before launch (the framework's prerequisites, the launch checks) and launches.
The checks run here, before the framework starts: found inside one of its workers, a missing GPU fails
late, or never (Ray waits for one).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

from pydantic import BaseModel

from agenthub.config import validate_config
from agenthub.training.launch_checks import LaunchReport
from agenthub.training.lifecycle import preflight
from agenthub.training.prerequisites import FrameworkNeeds

SettingsT = TypeVar("SettingsT", bound=BaseModel)
SettingsT_contra = TypeVar("SettingsT_contra", bound=BaseModel, contravariant=True)


class LaunchChecks(Protocol[SettingsT_contra]):
    """A trainer's launch checks: the env and the policy's token limits, played on one task (offline in a
    dry run)."""

    def __call__(self, settings: SettingsT_contra, /, *, dry_run: bool) -> LaunchReport: ...


def _nothing_to_refuse(settings: BaseModel) -> None:
    return None


@dataclass(frozen=True)
class FrameworkTrainer(Generic[SettingsT]):
    """``run(config, dry_run)`` as the ``Trainer`` protocol asks, from a trainer's parts: its settings' model,
    what its framework needs on this machine, its launch checks, its dry run (prints; 0, or raises when the
    checks refuse) and its launch (the framework's exit code); ``refuse_misfits`` raises for settings that
    do not fit the env (an unknown env, seats it lacks), before a dry run too."""

    settings_type: type[SettingsT]
    framework_needs: Callable[[SettingsT], FrameworkNeeds]
    launch_checks: LaunchChecks[SettingsT]
    print_dry_run: Callable[[SettingsT], int]
    launch: Callable[[SettingsT], int]
    refuse_misfits: Callable[[SettingsT], None] = field(default=_nothing_to_refuse, kw_only=True)

    def run(self, config: Mapping[str, Any], *, dry_run: bool = False) -> int:
        settings = validate_config(self.settings_type, config)
        self.refuse_misfits(settings)
        if dry_run:
            return self.print_dry_run(settings)
        preflight(self.framework_needs(settings), lambda: self.launch_checks(settings, dry_run=False))
        return self.launch(settings)
