"""``prerequisite_tests``: the one test class every trainer plugin's prerequisites test is, and
``module_found``, which checks a module is installed without running a package's ``__init__``."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path
from types import ModuleType

import pytest

from agenthub.training import prerequisite_tests
from agenthub.training.prerequisites import missing_modules, module_found


def test_a_module_is_found_without_importing_its_packages(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "noisy_framework"
    (package / "api").mkdir(parents=True)
    marker = tmp_path / "imported"
    (package / "__init__.py").write_text(f"open({str(marker)!r}, 'w').close()\n")  # as AReaL makes cache dirs
    (package / "api" / "__init__.py").write_text("")
    (package / "api" / "cli_args.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))

    assert module_found("noisy_framework.api.cli_args") and module_found("noisy_framework")
    assert not module_found("noisy_framework.api.absent") and not module_found("absent_framework.api")
    assert not marker.exists() and "noisy_framework" not in sys.modules
    assert missing_modules({"noisy_framework.api": "noisy==1", "nope.x": "nope==2"}) == {"nope.x": "nope==2"}
    assert module_found("json.decoder")  # an imported package is found as it is


def prerequisites_module(tmp_path: Path, pinned: list[str]) -> ModuleType:
    module = ModuleType("agenthub_trainer_fake.prerequisites")
    module.__file__ = str(tmp_path / "prerequisites.py")
    module.TRAINER_MODULES = {"json": "json-lib==1.0", "csv": "csv-lib==2.0"}  # type: ignore[attr-defined]
    module.GPU_MODULES = {"fake_gpu": "fake-gpu==3"}  # type: ignore[attr-defined]
    steps = "\n".join(f'[[variants.cpu.steps]]\nrequirements = ["{r}"]' for r in pinned)
    (tmp_path / "install.toml").write_text(textwrap.dedent(steps) + "\n")
    return module


def test_the_factorys_tests_pass_on_a_complete_recipe_and_name_what_an_incomplete_one_lacks(tmp_path: Path) -> None:
    complete = prerequisite_tests(prerequisites_module(tmp_path, ["json-lib==1.0", "csv-lib==2.0"]))()
    for module in ("json", "csv"):
        complete.test_every_trainer_module_imports(module)
    complete.test_every_requirement_is_pinned_in_the_cpu_recipe()
    complete.test_gpu_modules_name_requirements()

    incomplete = prerequisite_tests(prerequisites_module(tmp_path, ["json-lib==1.0"]))()
    with pytest.raises(AssertionError, match=r"not in the cpu variant of .*install.toml: \{'csv': 'csv-lib==2.0'\}"):
        incomplete.test_every_requirement_is_pinned_in_the_cpu_recipe()
    with pytest.raises(ModuleNotFoundError):
        incomplete.test_every_trainer_module_imports("fake_gpu")
