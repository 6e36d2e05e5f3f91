"""Write what a memory benchmark measured into the env plugin's ``footprints.json`` (``--write-footprints``).

A plugin reads its footprint from that file (``agenthub.measured_footprint``), so a re-measure rewrites data
beside the plugin, never its code: the fingerprint that keeps a result current leaves these files out
(``provenance.FINGERPRINT_VERSION`` 4), since no figure depends on them. Figures are rounded *up*, so a pod's
request never sits under what was measured.
"""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path
from typing import Any

from agenthub import EnvSpec
from agenthub.measured_footprints import FOOTPRINTS_FILE, package_of

ROOT = Path(__file__).resolve().parents[1]


def round_up(value: float, step: float) -> float:
    """``value`` rounded up to a multiple of ``step`` (a float error of 1e-9 is not a step)."""
    return round(math.ceil(value / step - 1e-9) * step, 6)


def footprints_path(spec: EnvSpec) -> Path:
    """The ``footprints.json`` beside the code of the package that holds ``spec``'s factory."""
    package = package_of(spec)
    found = importlib.util.find_spec(package)
    if found is None or not found.submodule_search_locations:
        raise ValueError(f"env {spec.name!r}: cannot find package {package!r} on disk")
    path = Path(next(iter(found.submodule_search_locations))) / FOOTPRINTS_FILE
    if ROOT not in path.resolve().parents:
        raise ValueError(
            f"env {spec.name!r}: {path} is not in this checkout ({ROOT}); install the plugin editable "
            "(pip install -e) to write its footprint"
        )
    return path


def write_footprint(
    spec: EnvSpec, *, base_mib: float, per_session_mib: float, source: str, measured: dict[str, Any]
) -> Path:
    """Record ``spec``'s figures (other envs of the same file are kept) and return the file written."""
    path = footprints_path(spec)
    table = json.loads(path.read_text(encoding="utf-8"))["envs"] if path.is_file() else {}
    table[spec.name] = {
        "base_mib": base_mib,
        "per_session_mib": per_session_mib,
        "cpus": spec.footprint.cpus,
        "source": source,
        "measured": measured,
    }
    written = {
        "written_by": "benchmarks/env_plugins.py and benchmarks/webarena_env.py (--write-footprints); do not edit",
        "envs": dict(sorted(table.items())),
    }
    path.write_text(json.dumps(written, indent=2) + "\n", encoding="utf-8")
    return path
