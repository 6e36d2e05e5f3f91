"""Documentation keeps up with the code: every hook and public name."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import agenthub
from agenthub import hookspecs

ROOT = Path(__file__).resolve().parents[1]


def hook_names() -> list[str]:
    return [name for name, fn in inspect.getmembers(hookspecs, inspect.isfunction) if name.startswith("agenthub_")]


def test_every_hook_is_documented_in_contributing() -> None:
    documented = set(re.findall(r"^### `(agenthub_\w+)\(register\)`", (ROOT / "CONTRIBUTING.md").read_text(), re.M))
    assert set(hook_names()) == documented


def test_every_hook_has_a_test() -> None:
    tests = "\n".join(p.read_text() for p in (ROOT / "tests").rglob("test_*.py"))
    for name in hook_names():
        assert f"def {name}(" in tests, f"no test plugin implements {name}"


def test_public_names_match_all() -> None:
    for name in agenthub.__all__:
        assert getattr(agenthub, name) is not None, name
    assert len(set(agenthub.__all__)) == len(agenthub.__all__)


def test_readme_commands_are_the_ones_ci_runs() -> None:
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    test_command = "pip install -r requirements-dev.txt && python -m pytest"
    assert test_command in readme and test_command in ci
    main_job = "pip install torch==2.13.0 -e . -e plugins/trainers/trl && agenthub run trainer=trl env=trail"
    assert main_job in readme
