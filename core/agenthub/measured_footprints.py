"""Footprints as a benchmark measured them: a plugin's ``footprints.json``, read into its ``EnvSpec``.

A server's memory is a measurement, not a design choice, so the figures live in a data file that the
benchmark itself writes (``benchmarks/env_plugins.py --write-footprints``, ``benchmarks/webarena_env.py
--write-footprints``) beside the plugin's code, and the plugin declares
``footprint=measured_footprint(__package__, "NAME")``. Re-measuring then rewrites data, not code: the
benchmark's own result stays current, and no figure is copied into a comment by hand.

The file maps env names to figures::

    {"envs": {"maze": {"base_mib": 70.5, "per_session_mib": 0.01, "cpus": 1.0,
                       "source": "benchmarks/results/env_plugins.json", "measured": {...}}}}

``measured`` is what the benchmark saw (before rounding up), kept for the reader; only the first four keys
size a server.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

from agenthub.errors import PluginError
from agenthub.specs import EnvSpec, Footprint

FOOTPRINTS_FILE = "footprints.json"
SIZING_KEYS = ("base_mib", "per_session_mib", "cpus", "source")


def _remeasure(env: str) -> str:
    return f"re-measure it with `python benchmarks/env_plugins.py --write-footprints {env}` from a checkout"


def package_of(spec: EnvSpec) -> str:
    """The package whose ``footprints.json`` holds ``spec``'s figures: that of its factory's module."""
    if not isinstance(spec.factory, str):
        raise PluginError(f"env {spec.name!r}: its factory is a callable, not 'package.module:attribute'")
    module = spec.factory.partition(":")[0]
    return module.rpartition(".")[0] or module


def read_footprints(package: str) -> dict[str, Any]:
    """The ``envs`` table of ``package``'s ``footprints.json``."""
    try:
        text = resources.files(package).joinpath(FOOTPRINTS_FILE).read_text(encoding="utf-8")
    except (FileNotFoundError, ModuleNotFoundError) as exc:
        raise PluginError(
            f"package {package!r} ships no {FOOTPRINTS_FILE} ({exc}); add it to the package's data "
            "(pyproject's [tool.setuptools.package-data]) or " + _remeasure("ENV")
        ) from exc
    try:
        table = json.loads(text)["envs"]
    except (json.JSONDecodeError, KeyError, TypeError) as exc:
        raise PluginError(
            f"{package}/{FOOTPRINTS_FILE} is not a footprints file ({type(exc).__name__}: {exc}): it must be "
            'a JSON object {"envs": {NAME: {"base_mib": ..., "per_session_mib": ...}}}; ' + _remeasure("ENV")
        ) from exc
    if not isinstance(table, dict):
        raise PluginError(f"{package}/{FOOTPRINTS_FILE}: 'envs' must map env names to figures; " + _remeasure("ENV"))
    return table


def measured_footprint(package: str | None, env: str) -> Footprint:
    """``env``'s footprint from ``package``'s ``footprints.json`` (call with ``__package__``)."""
    if not package:
        raise PluginError(f"measured_footprint for env {env!r} needs the plugin's package: pass __package__")
    table = read_footprints(package)
    figures = table.get(env)
    if not isinstance(figures, dict):
        known = ", ".join(sorted(table)) or "none"
        raise PluginError(
            f"{package}/{FOOTPRINTS_FILE} has no figures for env {env!r} (it has: {known}); " + _remeasure(env)
        )
    try:
        return Footprint(
            base_mib=float(figures["base_mib"]),
            per_session_mib=float(figures["per_session_mib"]),
            cpus=float(figures.get("cpus", 1.0)),
            source=str(figures.get("source", f"{package}/{FOOTPRINTS_FILE}")),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise PluginError(
            f"{package}/{FOOTPRINTS_FILE}: env {env!r} needs numbers for base_mib and per_session_mib "
            f"({type(exc).__name__}: {exc}); " + _remeasure(env)
        ) from exc
