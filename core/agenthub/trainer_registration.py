"""A trainer plugin's registration in one call: ``agenthub_register_trainers = agenthub.trainer_hook("NAME", ...)``.

Every trainer plugin registers one :class:`~agenthub.TrainerSpec` (under a name and perhaps aliases); the
hook around it is the same each time, so it is written here once. The spec's version is filled in from the
plugin's distribution when the plugin is loaded (:mod:`agenthub.plugins`). This module imports only what
``import agenthub`` already has: a plugin's entry point must stay cheap to load.
"""

from __future__ import annotations

from collections.abc import Callable

from agenthub.hookimpl import hookimpl
from agenthub.specs import TrainerSpec

RegisterTrainers = Callable[[Callable[[TrainerSpec], None]], None]
"""The ``agenthub_register_trainers`` hook: called with ``register``, it registers the plugin's trainers."""


def trainer_hook(*names: str, factory: str, description: str, trains_on_cpu: bool = False) -> RegisterTrainers:
    """The ``agenthub_register_trainers`` hook that registers the trainer ``factory`` (``module:Class``)
    under each of ``names`` (its name, then any aliases), as :class:`~agenthub.TrainerSpec` describes the
    other settings. Assign it to that name in the plugin module."""

    @hookimpl
    def agenthub_register_trainers(register: Callable[[TrainerSpec], None]) -> None:
        for name in names:
            register(TrainerSpec(name=name, factory=factory, description=description, trains_on_cpu=trains_on_cpu))

    return agenthub_register_trainers
