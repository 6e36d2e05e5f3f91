"""Collects every plugin's tests in one pytest run from the repository root.

Plugin test directories are skipped (and named in the report header) when
their distribution is not installed; ``AGENTHUB_REQUIRE_PLUGIN_TESTS=1``
turns a skipped plugin into an error, so CI cannot pass by skipping.

Tests that need more than Python (a browser, a JVM, a Ray cluster) or minutes
of CPU are marked here by rule, so a new test of that kind is marked without
anyone remembering to: pyproject.toml's ``addopts`` deselects them by default,
and ``.ci/run`` runs each category as its own job.
"""

from __future__ import annotations

import importlib.util
import os
import re
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


# Fixtures that start Chromium (webarena's env, tests/viewer's pages; `page` depends on them): a test
# whose fixture closure holds one needs a browser.
BROWSER_FIXTURES = frozenset({"browser", "chromium"})
# Fixtures that start Ray nodes on this machine.
RAY_FIXTURES = frozenset({"cluster", "one_node"})
# Plugins whose every test starts a JVM.
JVM_PLUGINS = (ROOT / "plugins" / "envs" / "sciworld",)
# Tests no fixture gives away, by a pattern matched at the start of the node id, and why each is out of the
# fast suite.
MARKED_BY_NODE_ID = {
    re.compile(r"tests/service/test_schema_fuzz\.py::test_every_phase"): "slow",  # every schemathesis phase
    re.compile(r"plugins/envs/search/tests/test_search_schema_fuzz\.py"): "slow",  # the same, two servers
    re.compile(r"tests/test_scaffold\.py::test_a_generated_plugin_installs"): "slow",  # pip installs a plugin
    # Each benchmark's quick mode in a subprocess, its JSON and plot; the stand-in LLM's own tests are quick.
    re.compile(r"tests/test_benchmarks\.py::test_(?!the_stand_in|summary_without|tiny_model_envs_reads)"): "slow",
    re.compile(r"tests/training/test_env_servers_ray\.py::test_a_ray_the_run_started"): "ray_cluster",  # starts Ray
}


# Tests that build the tiny model, which needs torch. torch's CPU build is pinned for Python 3.11; CI's jobs on
# 3.12 and 3.13 run without it (PyPI would give a CUDA build of several GB), so there these are skipped.
NEEDS_TORCH = re.compile(
    r"tests/(testing/test_model_sampler\.py|training/test_launch_check|training/test_trainer_glue\.py::test_(the_tiny_model|a_model_not_on_disk)"
    r"|training/test_trainer_parts\.py::test_the_launch_checks_play_to_the_horizons_longest_limit)"
)
HAVE_TORCH = importlib.util.find_spec("torch") is not None


@pytest.hookimpl(tryfirst=True)  # before pytest's own hook deselects by marker
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        path = Path(str(item.path))
        if BROWSER_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.browser)
        if RAY_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.ray_cluster)
        if any(plugin in path.parents for plugin in JVM_PLUGINS):
            item.add_marker(pytest.mark.jvm)
        if not HAVE_TORCH and NEEDS_TORCH.match(item.nodeid):
            item.add_marker(pytest.mark.skip(reason="needs torch (the tiny model), which is not installed"))
        for pattern, marker in MARKED_BY_NODE_ID.items():
            if pattern.match(item.nodeid):
                item.add_marker(getattr(pytest.mark, marker))


def pytest_report_header(config: pytest.Config) -> list[str]:
    if not MISSING:
        return []
    names = ", ".join(str(p.relative_to(ROOT)) for p in MISSING)
    return [f"agenthub: skipping tests of plugins not installed: {names} (pip install -r requirements-dev.txt)"]
