"""Conformance checks and pytest helpers for environment plugins.

In a plugin's tests::

    from agenthub.testing import conformance_tests

    test_conformance = conformance_tests("textcraft")  # one pytest item per check
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agenthub.testing.conformance import CHECK_NAMES, ConformanceReport, check_env, run_checks
    from agenthub.testing.pytest_plugin import conformance_tests

_LAZY = {
    "CHECK_NAMES": "agenthub.testing.conformance",
    "ConformanceReport": "agenthub.testing.conformance",
    "check_env": "agenthub.testing.conformance",
    "run_checks": "agenthub.testing.conformance",
    "conformance_tests": "agenthub.testing.pytest_plugin",
}


def __getattr__(name: str) -> Any:
    import importlib

    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'agenthub.testing' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


__all__ = ["CHECK_NAMES", "ConformanceReport", "check_env", "conformance_tests", "run_checks"]
