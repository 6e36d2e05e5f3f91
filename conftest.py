"""Collects every plugin's tests in one pytest run from the repository root.

Plugin test directories are skipped (and named in the report header) when
their distribution is not installed; ``AGENTHUB_REQUIRE_PLUGIN_TESTS=1``
turns a skipped plugin into an error, so CI cannot pass by skipping.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).parent
PLUGIN_KINDS = ("envs", "agents")  # trainer plugins get their own virtualenvs: see .ci/run


def _plugin_dirs() -> dict[Path, str]:
    """Each plugin's directory and the import package its tests need."""
    found: dict[Path, str] = {}
    for kind in PLUGIN_KINDS:
        for plugin in sorted((ROOT / "plugins" / kind).glob("*/")):
            packages = [p.parent.name for p in plugin.glob("agenthub_*/__init__.py")]
            if packages and (plugin / "tests").is_dir():
                found[plugin] = packages[0]
    return found


def _missing_plugins() -> dict[Path, str]:
    return {path: pkg for path, pkg in _plugin_dirs().items() if importlib.util.find_spec(pkg) is None}


MISSING = _missing_plugins()


def pytest_configure(config: pytest.Config) -> None:
    if MISSING and os.environ.get("AGENTHUB_REQUIRE_PLUGIN_TESTS") == "1":
        names = ", ".join(str(p.relative_to(ROOT)) for p in MISSING)
        raise pytest.UsageError(
            f"plugin tests cannot run because these plugins are not installed: {names}; "
            "install them with `pip install -r requirements-dev.txt`"
        )


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    for plugin in MISSING:
        if collection_path == plugin or plugin in collection_path.parents:
            return True
    return None


def pytest_report_header(config: pytest.Config) -> list[str]:
    if not MISSING:
        return []
    names = ", ".join(str(p.relative_to(ROOT)) for p in MISSING)
    return [f"agenthub: skipping tests of plugins not installed: {names} (pip install -r requirements-dev.txt)"]
