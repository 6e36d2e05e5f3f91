"""Every distribution of this repository installs by name with its package data and complete metadata.

The full check builds all wheels (.ci/wheelhouse, in CI); here, each pyproject.toml is read, the
`agenthub` range is tied to the protocol line, and one real wheel is built and checked.
"""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path
from types import ModuleType

import pytest

import agenthub

ROOT = Path(__file__).resolve().parents[1]


def _check_wheels() -> ModuleType:
    spec = importlib.util.spec_from_file_location("check_wheels", ROOT / ".ci" / "check_wheels.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


check_wheels = _check_wheels()
DISTS = check_wheels.distribution_dirs()


def _project(dist: Path) -> dict[str, object]:
    project: dict[str, object] = tomllib.loads((dist / "pyproject.toml").read_text())["project"]
    return project


def test_every_distribution_is_found() -> None:
    names = {_project(dist)["name"] for dist in DISTS}
    assert {"agenthub", "agenthub-env-sciworld", "agenthub-agent-openai", "agenthub-trainer-trl"} <= names
    assert "agenthub-env-anagram" in names  # the example plugin is built like the others
    plugins = {p.parent for p in ROOT.glob("plugins/*/*/pyproject.toml")}
    assert plugins <= set(DISTS)


@pytest.mark.parametrize("dist", DISTS, ids=lambda d: d.relative_to(ROOT).as_posix() or "core")
def test_metadata_is_complete(dist: Path) -> None:
    project = _project(dist)
    where = dist.relative_to(ROOT).as_posix() or "."
    assert project.get("readme") == "README.md" and (dist / "README.md").is_file(), where
    assert project.get("license") == "Apache-2.0", where
    assert project.get("license-files") == ["LICENSE"], where
    assert (dist / "LICENSE").read_text() == (ROOT / "LICENSE").read_text(), f"{where}/LICENSE differs from ./LICENSE"
    urls = project.get("urls")
    assert isinstance(urls, dict) and set(check_wheels.URL_LABELS) <= set(urls), where
    assert project.get("dynamic") == ["version"], f"{where}: the version is read from the package's __version__"
    build = tomllib.loads((dist / "pyproject.toml").read_text())["build-system"]
    # setuptools reads an SPDX `license` string and `license-files` from 77 on.
    assert "setuptools>=77" in build["requires"], where


def test_the_current_line_is_the_one_the_release_policy_names() -> None:
    lower, upper = check_wheels.core_range()
    assert agenthub.__version__.startswith(f"{lower}.")
    policy = (ROOT / "docs" / "releasing.md").read_text()
    row = next((line for line in policy.splitlines() if line.startswith(f"| `{lower}.x` |")), None)
    assert row is not None, f"docs/releasing.md's compatibility table has no row for agenthub {lower}.x"
    cells = [cell.strip().strip("`") for cell in row.strip("|").split("|")]
    assert cells[1] == str(agenthub.PROTOCOL_VERSION), f"docs/releasing.md ties {lower}.x to protocol {cells[1]}"
    assert cells[2] == f"agenthub>={lower},<{upper}"


@pytest.mark.parametrize("dist", [d for d in DISTS if d != ROOT], ids=lambda d: d.relative_to(ROOT).as_posix())
def test_plugins_require_the_protocol_line(dist: Path) -> None:
    lower, upper = check_wheels.core_range()
    dependencies = _project(dist).get("dependencies")
    assert isinstance(dependencies, list)
    on_core = [dep for dep in dependencies if re.match(r"agenthub\s*($|[<>=!~;\[])", dep)]
    assert on_core == [f"agenthub>={lower},<{upper}"], f"{dist.relative_to(ROOT)} requires {on_core}"


@pytest.fixture(scope="module")
def wordle_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wordle plugin's wheel, built for real (it ships prompts and word lists as package data).

    With build isolation, as a release builds it: the setuptools its pyproject.toml asks for, not this venv's.
    """
    out = tmp_path_factory.mktemp("wheelhouse")
    src = tmp_path_factory.mktemp("src") / "wordle"
    # A copy, so that the build's build/ and *.egg-info/ stay out of the checkout.
    ignore = shutil.ignore_patterns("build", "*.egg-info", "__pycache__")
    shutil.copytree(ROOT / "plugins" / "envs" / "wordle", src, ignore=ignore)
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out), str(src)],
        check=True,
        timeout=300,
    )
    (wheel,) = out.glob("agenthub_env_wordle-*.whl")
    return wheel


def test_a_built_wheel_carries_its_package_data_and_metadata(wordle_wheel: Path) -> None:
    dist = ROOT / "plugins" / "envs" / "wordle"
    assert check_wheels.check_distribution(dist, wordle_wheel.parent) == []
    names = zipfile.ZipFile(wordle_wheel).namelist()
    assert "agenthub_env_wordle/prompts/system.md" in names and "agenthub_env_wordle/data/answers.txt" in names


def test_the_wheel_check_names_a_missing_data_file(wordle_wheel: Path, tmp_path: Path) -> None:
    """A wheel without its prompt (package-data forgotten) is refused with the file and the fix."""
    stripped = tmp_path / wordle_wheel.name
    with zipfile.ZipFile(wordle_wheel) as source, zipfile.ZipFile(stripped, "w") as target:
        for item in source.infolist():
            if item.filename != "agenthub_env_wordle/prompts/system.md":
                target.writestr(item, source.read(item))
    problems = check_wheels.check_distribution(ROOT / "plugins" / "envs" / "wordle", tmp_path)
    assert len(problems) == 1
    assert "agenthub_env_wordle/prompts/system.md" in problems[0] and "package-data" in problems[0]


def _ci_python_versions() -> set[str]:
    """The versions `.ci/run` runs the fast suite on besides 3.11 (its `for version in ...` loop)."""
    loop = re.search(r"^for version in ([\d. ]+); do$", (ROOT / ".ci" / "run").read_text(), re.M)
    assert loop is not None, ".ci/run no longer loops over Python versions: update this test"
    return set(loop.group(1).split())


def _installed_by_the_version_jobs() -> set[str]:
    """Distribution folders the Python-version jobs install: requirements-dev.txt's, less torch and the hf agent."""
    lines = (ROOT / "requirements-dev.txt").read_text().splitlines()
    folders = {m.group(1) for line in lines if (m := re.match(r"-e (\S+?)(\[.*\])?$", line))}
    return {"." if f == "." else f for f in folders} - {"plugins/agents/hf"}


@pytest.mark.parametrize("dist", DISTS, ids=lambda d: d.relative_to(ROOT).as_posix() or "core")
def test_classifiers_name_the_python_versions_ci_tests(dist: Path) -> None:
    """3.11 for all; 3.12 and 3.13 only where CI's version jobs install the distribution and run its tests
    (trainers, the hf agent and sciworld, whose tests all need the JVM job, run on 3.11 alone)."""
    where = dist.relative_to(ROOT).as_posix() or "."
    classifiers = _project(dist).get("classifiers")
    assert isinstance(classifiers, list) and "Programming Language :: Python :: 3 :: Only" in classifiers, where
    claimed = {
        c.rsplit(" :: ", 1)[1] for c in classifiers if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c)
    }
    all_jvm = where == "plugins/envs/sciworld"  # conftest marks every sciworld test `jvm`: the 3.11 job alone
    newer = _ci_python_versions() if where in _installed_by_the_version_jobs() and not all_jvm else set()
    assert claimed == {"3.11"} | newer, (
        f"{where}: classifiers claim {sorted(claimed)}, CI tests {sorted({'3.11'} | newer)}"
    )
