"""Every name form of a plugin resolves the same way, and --index-url / --find-links reach pip.

The pass-through is checked for real: a tiny env plugin is built into a local wheelhouse and installed
by its full distribution name into a child virtualenv with ``--find-links WHEELHOUSE`` and no index.
"""

from __future__ import annotations

import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import pytest

from agenthub.cli.install_command import resolve
from agenthub.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]
PY = sys.executable
PIP = [PY, "-m", "pip", "install"]


def agenthub(*args: str, python: str = PY) -> subprocess.CompletedProcess[str]:
    return subprocess.run([python, "-m", "agenthub", *args], capture_output=True, text=True, timeout=300, cwd=ROOT)


def commands(stdout: str) -> list[list[str]]:
    import shlex

    return [shlex.split(line[2:]) for line in stdout.splitlines() if line.startswith("$ ")]


@pytest.mark.parametrize(
    ("forms", "folder"),
    [
        (["sciworld", "env-sciworld", "agenthub-env-sciworld", "agenthub_env_sciworld", "Agenthub-Env-Sciworld"],
         "envs/sciworld"),
        (["textcraft[test]", "env-textcraft[test]", "agenthub-env-textcraft[test]"], "envs/textcraft"),
        (["verl", "trainer-verl", "agenthub-trainer-verl"], "trainers/verl"),
        (["openai", "agent-openai", "agenthub-agent-openai"], "agents/openai"),
    ],
)  # fmt: skip
def test_every_name_form_resolves_to_the_plugin_in_this_checkout(forms: list[str], folder: str) -> None:
    targets = [resolve(form) for form in forms]
    for target in targets:
        assert target.in_checkout and target.project == ROOT / "plugins" / folder, target
        assert (target.kind, target.extras) == (targets[0].kind, targets[0].extras)


def test_a_version_sends_every_form_to_the_index() -> None:
    for form in ("env-sciworld==0.1.0", "agenthub-env-sciworld==0.1.0"):
        target = resolve(form)
        assert not target.in_checkout and target.distribution == "agenthub-env-sciworld"
        assert target.requirement == "agenthub-env-sciworld==0.1.0" and target.kind == "env"


def test_unknown_names_get_a_suggestion() -> None:
    with pytest.raises(ConfigError, match=r"unknown plugin 'sciwrld'; did you mean 'sciworld'\? say its kind"):
        resolve("sciwrld")


def test_index_options_reach_every_install_command() -> None:
    done = agenthub(
        "install", "--dry-run", "agenthub-env-textcraft[test]", "--installer", "pip",
        "--index-url", "http://127.0.0.1:9/simple", "--extra-index-url", "http://127.0.0.1:9/more",
        "--find-links", "/tmp/wheelhouse",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert commands(done.stdout) == [
        [*PIP, f"{ROOT}/plugins/envs/textcraft[test]", "--index-url", "http://127.0.0.1:9/simple",
         "--extra-index-url", "http://127.0.0.1:9/more", "--find-links", "/tmp/wheelhouse"],
    ]  # fmt: skip
    # a trainer's recipe steps get them too
    verl = agenthub("install", "--dry-run", "agenthub-trainer-verl", "--variant", "cpu", "--installer", "pip",
                    "--find-links", "/tmp/wheelhouse")  # fmt: skip
    assert verl.returncode == 0, verl.stderr
    steps = commands(verl.stdout)
    assert steps and all(step[-2:] == ["--find-links", "/tmp/wheelhouse"] for step in steps)


def test_a_plugin_installs_by_its_full_name_from_a_local_wheelhouse(tmp_path: Path) -> None:
    project = tmp_path / "project"
    package = project / "agenthub_env_wheelhousetest"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text('"""A tiny plugin for the install tests."""\n')
    (project / "pyproject.toml").write_text(
        textwrap.dedent("""\
        [build-system]
        requires = ["setuptools>=69"]
        build-backend = "setuptools.build_meta"

        [project]
        name = "agenthub-env-wheelhousetest"
        version = "0.1.0"
        """)
    )
    wheelhouse = tmp_path / "wheelhouse"
    subprocess.run(
        [PY, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(wheelhouse), str(project)],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    venv = tmp_path / "venv"
    subprocess.run([PY, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    child_site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    # agenthub and pip come from this environment; what is installed lands in the child's own site-packages
    Path(child_site, "parent_env.pth").write_text(
        f"import site; site.addsitedir({sysconfig.get_paths()['purelib']!r})\n"
    )
    done = agenthub(
        "install", "agenthub-env-wheelhousetest", "--installer", "pip", "--find-links", str(wheelhouse),
        "--pip-args=--no-index -q", python=str(python),
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"--find-links {wheelhouse}" in done.stdout
    where = subprocess.run(
        [str(python), "-c", "import agenthub_env_wheelhousetest as m; print(m.__file__)"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert where.startswith(child_site)
