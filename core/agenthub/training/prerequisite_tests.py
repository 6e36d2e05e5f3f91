"""One test class per trainer plugin: its cpu install recipe brings every module its trainer imports.

A trainer plugin's ``prerequisites`` module maps each module its trainer imports to the pip requirement
that provides it (``TRAINER_MODULES``, and ``GPU_MODULES`` for the GPU variant), next to the plugin's
``install.toml``. The tests import each module in the virtualenv CI made with
``agenthub install trainer-NAME[test] --variant cpu`` and check that each requirement is pinned in that
recipe, so an incomplete recipe fails CI. A plugin's test file is one line::

    TestPrerequisites = prerequisite_tests(prerequisites)

pytest is imported only when the factory is called (it is a test dependency, not a runtime one).
"""

from __future__ import annotations

import importlib
import tomllib
import warnings
from pathlib import Path
from types import ModuleType
from typing import Any


def prerequisite_tests(prerequisites: ModuleType, recipe: Path | None = None) -> type:
    """A pytest test class over ``prerequisites.TRAINER_MODULES`` and ``GPU_MODULES``; ``recipe``: the
    plugin's install recipe (default: ``install.toml`` beside the ``prerequisites`` module)."""
    import pytest

    trainer_modules: dict[str, str] = dict(prerequisites.TRAINER_MODULES)
    gpu_modules: dict[str, str] = dict(prerequisites.GPU_MODULES)
    path = recipe if recipe is not None else Path(str(prerequisites.__file__)).with_name("install.toml")

    class PrerequisiteTests:
        @pytest.mark.parametrize("module", sorted(trainer_modules))
        def test_every_trainer_module_imports(self, module: str) -> None:
            with warnings.catch_warnings():
                # the framework's own import-time notices (optional engines it did not find) are not failures
                warnings.simplefilter("ignore")
                importlib.import_module(module)

        def test_every_requirement_is_pinned_in_the_cpu_recipe(self) -> None:
            steps: list[dict[str, Any]] = tomllib.loads(path.read_text())["variants"]["cpu"]["steps"]
            pinned = {r for step in steps for r in step.get("requirements", [])}
            missing = {m: r for m, r in trainer_modules.items() if r not in pinned}
            assert not missing, f"not in the cpu variant of {path}: {missing}"

        def test_gpu_modules_name_requirements(self) -> None:
            assert gpu_modules, f"{prerequisites.__name__}.GPU_MODULES is empty"
            assert all(requirement.strip() for requirement in gpu_modules.values())

    return PrerequisiteTests
