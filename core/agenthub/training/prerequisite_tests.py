"""One test class per trainer plugin: its cpu install recipe brings every module its trainer imports.

A trainer plugin's ``prerequisites`` module maps each module its trainer imports to the pip requirement
that provides it (``TRAINER_MODULES``, and ``GPU_MODULES`` for the GPU variant), next to the plugin's
``install.toml``. The tests import each module in the virtualenv CI made with
``agenthub install trainer-NAME[test] --variant cpu`` and check that each requirement is pinned in that
recipe, so an incomplete recipe fails CI. A plugin's test file is one line::

    TestPrerequisites = prerequisite_tests(prerequisites)

The class also holds the plugin's ``[tool.agenthub] trains-on-cpu`` (its pyproject, which core's
first-party catalogue reads) equal to its ``TrainerSpec.trains_on_cpu`` (:func:`check_cpu_flag`).

pytest is imported only when the factory is called (it is a test dependency, not a runtime one).
"""

from __future__ import annotations

import importlib
import tomllib
import warnings
from pathlib import Path
from types import ModuleType
from typing import Any


def check_cpu_flag(package: ModuleType) -> None:
    """Fail unless the trainer plugin ``package``'s pyproject and its ``TrainerSpec`` agree on training on a CPU."""
    from agenthub.cli.plugin_catalogue import plugin_of
    from agenthub.plugins import get_plugin_host

    folder = Path(str(package.__file__)).parents[1]
    project = tomllib.loads((folder / "pyproject.toml").read_text())
    found = plugin_of(project["project"]["name"])
    assert found is not None and found[0] == "trainer", f"{folder} is not a trainer plugin's checkout"
    flag = project.get("tool", {}).get("agenthub", {}).get("trains-on-cpu", False) is True
    spec = get_plugin_host().trainer(found[1]).trains_on_cpu
    assert flag == spec, (
        f"{folder}/pyproject.toml says trains-on-cpu = {str(flag).lower()} but its TrainerSpec says "
        f"trains_on_cpu={spec}: make them agree, then regenerate core's catalogue "
        "(python -m agenthub.cli.plugin_catalogue plugins > core/agenthub/cli/first_party_plugins.toml)"
    )


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

        def test_the_pyproject_and_the_spec_agree_on_training_on_a_cpu(self) -> None:
            check_cpu_flag(importlib.import_module(prerequisites.__name__.rsplit(".", 1)[0]))

    return PrerequisiteTests
