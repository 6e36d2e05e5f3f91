"""Names a package re-exports from its modules, imported on first use.

A plugin's entry point imports its package, so a package ``__init__`` that
imported its env (and so gymnasium, a JVM bridge or torch) would make
``agenthub plugins`` slow. Instead the package lists what it offers and where
it lives::

    __getattr__ = lazy_exports(__name__, {"MyEnv": ".env", "run_cli": "agenthub.cli.main:main"})

A module name starting with a dot is relative to the package; ``module:attr``
re-exports ``attr`` under another name.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(package: str, names: Mapping[str, str]) -> Callable[[str], Any]:
    """A module-level ``__getattr__`` for ``package`` that imports ``names[name]`` when asked for ``name``."""
    table = dict(names)

    def __getattr__(name: str) -> Any:
        where = table.get(name)
        if where is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, _, attr = where.partition(":")
        value = getattr(importlib.import_module(module, package), attr or name)
        # Cache it on the package, so the next access is a plain attribute.
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
