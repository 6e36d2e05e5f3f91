"""The cpu install recipe brings every module the trainer imports: an incomplete install.toml fails CI here.

``prerequisites.TRAINER_MODULES`` maps each module to the requirement that provides it; these tests
import each one in this (CI's) virtualenv, made by ``agenthub install trainer-openrlhf[test] --variant cpu``,
and check that each requirement is pinned in that recipe.
"""

from __future__ import annotations

import importlib
import tomllib
import warnings
from pathlib import Path

import pytest

from agenthub_trainer_openrlhf import prerequisites

RECIPE = Path(prerequisites.__file__).with_name("install.toml")


@pytest.mark.parametrize("module", sorted(prerequisites.TRAINER_MODULES))
def test_every_trainer_module_imports(module: str) -> None:
    with warnings.catch_warnings():
        # the framework's own import-time notices (optional engines it did not find) are not failures
        warnings.simplefilter("ignore")
        importlib.import_module(module)


def test_every_requirement_is_pinned_in_the_cpu_recipe() -> None:
    recipe = tomllib.loads(RECIPE.read_text())
    pinned = {r for step in recipe["variants"]["cpu"]["steps"] for r in step.get("requirements", [])}
    missing = {m: r for m, r in prerequisites.TRAINER_MODULES.items() if r not in pinned}
    assert not missing, f"not in the cpu variant of {RECIPE}: {missing}"


def test_gpu_modules_name_requirements() -> None:
    assert prerequisites.GPU_MODULES
    assert all(requirement.strip() for requirement in prerequisites.GPU_MODULES.values())
