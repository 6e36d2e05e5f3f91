"""Plugins look alike (CONTRIBUTING.md, "How a plugin is laid out"), with the scaffold as reference.

Checked on every in-tree plugin, the outside-author example and a plugin of each kind rendered
from the scaffold's templates: the package ``__init__``, the test file names and the build
requirements of every ``pyproject.toml``.
"""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from agenthub.scaffold.render import KINDS, PluginNames, render_plugin

ROOT = Path(__file__).resolve().parents[1]
SKIPPED_DIRS = {".venv", "build", "dist", "node_modules"}
# The eager imports a package __init__ may make: everything else loads on first use.
INIT_IMPORTS = {"__future__", "typing", "agenthub"}


def in_tree_plugins() -> list[Path]:
    return [*sorted(ROOT.glob("plugins/*/*/pyproject.toml")), ROOT / "examples/third_party_env/pyproject.toml"]


@pytest.fixture(scope="module")
def scaffolded(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    made = []
    for kind in KINDS:
        destination = tmp_path_factory.mktemp(kind) / f"made-{kind}"
        render_plugin(PluginNames.of(kind, f"made-{kind}"), destination)
        made.append(destination / "pyproject.toml")
    return made


def package_of(pyproject: Path) -> Path:
    [include] = tomllib.loads(pyproject.read_text(encoding="utf-8"))["tool"]["setuptools"]["packages"]["find"][
        "include"
    ]
    return pyproject.parent / include.rstrip("*")


def init_problems(init: Path) -> list[str]:
    """How a package ``__init__`` departs from the convention (empty: it follows it)."""
    tree = ast.parse(init.read_text(encoding="utf-8"))
    problems = []
    if ast.get_docstring(tree) is None:
        problems.append("no docstring saying what the plugin is")
    assigned: dict[str, ast.expr] = {}
    for node in tree.body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            modules = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            eager = [m for m in modules if m.split(".")[0] not in INIT_IMPORTS]
            if eager or (isinstance(node, ast.ImportFrom) and node.module == "agenthub" and not lazy_only(node)):
                problems.append(f"line {node.lineno} imports eagerly; re-export with lazy_exports instead")
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            problems.append(f"line {node.lineno} defines {node.name}; __getattr__ = lazy_exports(...) replaces it")
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            assigned[node.targets[0].id] = node.value
    version = assigned.get("__version__")
    if not (isinstance(version, ast.Constant) and isinstance(version.value, str)):
        problems.append('no __version__ = "X.Y.Z" (pyproject.toml reads it)')
    names = assigned.get("__all__")
    if not (isinstance(names, ast.List) and "__version__" in [getattr(e, "value", None) for e in names.elts]):
        problems.append("no explicit __all__ listing __version__")
    getattr_ = assigned.get("__getattr__")
    if getattr_ is not None and not (
        isinstance(getattr_, ast.Call) and getattr(getattr_.func, "id", None) == "lazy_exports"
    ):
        problems.append("__getattr__ is not lazy_exports(__name__, {...})")
    return problems


def lazy_only(node: ast.ImportFrom) -> bool:
    return [a.name for a in node.names] == ["lazy_exports"]


def test_every_package_init_follows_the_convention(scaffolded: list[Path]) -> None:
    problems = {}
    for pyproject in [*in_tree_plugins(), *scaffolded]:
        init = package_of(pyproject) / "__init__.py"
        if found := init_problems(init):
            problems[str(init)] = found
    assert problems == {}


def test_the_checker_names_what_departs_from_the_convention(tmp_path: Path) -> None:
    init = tmp_path / "__init__.py"
    init.write_text(
        "from agenthub_env_x.env import XEnv\n"
        "from agenthub import EnvSpec\n"
        "__version__ = '0.1.0'\n"
        "def __getattr__(name):\n    raise AttributeError(name)\n"
    )
    assert init_problems(init) == [
        "no docstring saying what the plugin is",
        "line 1 imports eagerly; re-export with lazy_exports instead",
        "line 2 imports eagerly; re-export with lazy_exports instead",
        "line 4 defines __getattr__; __getattr__ = lazy_exports(...) replaces it",
        "no explicit __all__ listing __version__",
    ]


def test_test_files_are_named_for_their_plugin(scaffolded: list[Path]) -> None:
    misnamed = []
    for pyproject in [*in_tree_plugins(), *scaffolded]:
        short = package_of(pyproject).name.split("_", 2)[2]  # agenthub_env_word_game -> word_game
        for test in sorted((pyproject.parent / "tests").glob("test_*.py")):
            if test.stem != f"test_{short}" and not test.stem.startswith(f"test_{short}_"):
                misnamed.append(str(test.relative_to(test.parents[2])))
    assert misnamed == []


def every_pyproject(scaffolded: list[Path]) -> list[Path]:
    found = [
        p
        for p in ROOT.rglob("pyproject.toml")
        # Any virtualenv in the checkout (.venv, .venv-trl, CI's .venv-ci-NAME) holds other projects' files.
        if not any(part in SKIPPED_DIRS or part.startswith(".venv") for part in p.relative_to(ROOT).parts)
    ]
    return [*sorted(found), *scaffolded]


def test_the_licence_form_in_use_has_the_setuptools_that_reads_it(scaffolded: list[Path]) -> None:
    """``license = "SPDX"`` and ``license-files`` need setuptools 77; older ones refuse to build."""
    too_old = []
    for pyproject in every_pyproject(scaffolded):
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
        project = data.get("project", {})
        if not (isinstance(project.get("license"), str) or "license-files" in project):
            continue
        requires = [Requirement(r) for r in data["build-system"]["requires"]]
        setuptools = [r for r in requires if r.name == "setuptools"]
        if not setuptools or setuptools[0].specifier.contains("76.99"):
            too_old.append(str(pyproject))
    assert too_old == []


def test_plugins_read_their_version_from_the_package(scaffolded: list[Path]) -> None:
    static = []
    for pyproject in [*in_tree_plugins(), *scaffolded]:
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
        version = data["tool"]["setuptools"].get("dynamic", {}).get("version", {}).get("attr")
        if (
            "version" not in data["project"].get("dynamic", [])
            or version != f"{package_of(pyproject).name}.__version__"
        ):
            static.append(str(pyproject))
    assert static == []
