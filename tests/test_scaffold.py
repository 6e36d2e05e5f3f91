"""``agenthub init`` makes packages that install and pass their own tests; ``agenthub install`` wraps pip.

Each generated package is pip-installed, for real, into a child virtualenv that sees this
environment's packages (a ``.pth`` file), so nothing here changes the test environment.
"""

from __future__ import annotations

import json
import subprocess
import sys
import sysconfig
from collections.abc import Iterator
from pathlib import Path

import pytest

from agenthub.cli.install_command import FIRST_PARTY, distribution, requirement
from agenthub.errors import ConfigError
from agenthub.scaffold.render import PluginNames, render_plugin

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def child_python(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A virtualenv whose site-packages also load this environment's; installs land in its own."""
    venv = tmp_path_factory.mktemp("child") / "venv"
    # No pip or setuptools of its own: the parent's (recent) ones are found through the .pth below.
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    child_site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    parent_site = sysconfig.get_paths()["purelib"]
    # addsitedir also runs the parent's .pth files, which is how its editable installs are found.
    Path(child_site, "parent_env.pth").write_text(f"import site; site.addsitedir({parent_site!r})\n")
    yield python


def agenthub(python: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(python), "-m", "agenthub", *args], capture_output=True, text=True, cwd=cwd, timeout=300)


def installed_plugins(python: Path) -> dict[str, dict[str, object]]:
    done = agenthub(python, "plugins", "--json")
    assert done.returncode == 0, done.stderr
    return {p["name"]: p for p in json.loads(done.stdout)}


@pytest.mark.parametrize("kind", ["env", "agent", "trainer"])
def test_a_generated_plugin_installs_is_discovered_and_passes_its_own_tests(
    kind: str, child_python: Path, tmp_path: Path
) -> None:
    name = f"made-{kind}"
    made = agenthub(child_python, "init", kind, name, "--dir", str(tmp_path / name))
    assert made.returncode == 0, made.stderr
    assert f"made agenthub-{kind}-{name}" in made.stdout

    install = agenthub(
        child_python, "install", str(tmp_path / name), "--editable", "--pip-args=--no-deps --no-build-isolation"
    )
    assert install.returncode == 0, install.stdout + install.stderr
    assert name in installed_plugins(child_python)

    tests = subprocess.run(
        [str(child_python), "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=tmp_path / name, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert tests.returncode == 0, tests.stdout[-3000:]
    assert " passed" in tests.stdout and "failed" not in tests.stdout
    lint = subprocess.run([sys.executable, "-m", "ruff", "check", "."], cwd=tmp_path / name, capture_output=True)
    assert lint.returncode == 0, lint.stdout.decode()

    removed = agenthub(child_python, "uninstall", str(tmp_path / name))
    assert removed.returncode == 0, removed.stderr
    assert name not in installed_plugins(child_python)


def test_init_refuses_a_bad_name_a_bad_kind_and_a_full_directory(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"lower-case letters and digits.*e\.g\. word-game"):
        PluginNames.of("env", "Word Game")
    with pytest.raises(ConfigError, match="choose one of: env, agent, trainer"):
        PluginNames.of("policy", "x")
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "notes.txt").write_text("mine")
    with pytest.raises(ConfigError, match="exists and is not empty; choose another --dir or pass --force"):
        render_plugin(PluginNames.of("env", "x"), tmp_path / "full")


def test_every_spelling_of_a_plugin_name() -> None:
    names = PluginNames.of("env", "word-game")
    assert (names.dist, names.module, names.title) == ("agenthub-env-word-game", "agenthub_env_word_game", "WordGame")


def test_short_names_map_to_distributions_and_checkout_folders() -> None:
    assert requirement("env-foo") == "agenthub-env-foo"
    assert requirement("agent-foo[test]>=1.2") == "agenthub-agent-foo[test]>=1.2"
    assert requirement("agenthub-trainer-foo==0.1") == "agenthub-trainer-foo==0.1"
    # first-party plugins need no kind, and install from this checkout's plugins/ folder
    assert requirement("sciworld") == str(ROOT / "plugins" / "envs" / "sciworld")
    assert requirement("env-sciworld[test]") == f"{ROOT / 'plugins' / 'envs' / 'sciworld'}[test]"
    assert requirement("sciworld==9.9") == "agenthub-env-sciworld==9.9"  # a version means the index
    assert distribution("sciworld") == distribution("env-sciworld") == "agenthub-env-sciworld"
    assert distribution(str(ROOT / "plugins" / "agents" / "openai")) == "agenthub-agent-openai"
    for plugin, kind in FIRST_PARTY.items():
        assert kind in ("env", "agent", "trainer"), plugin


def test_unknown_names_and_non_projects_get_a_clear_answer(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "agenthub", "install", "nosuchplugin"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2
    assert "unknown plugin 'nosuchplugin'; say its kind (env-NAME" in done.stderr and "env-sciworld" in done.stderr
    with pytest.raises(ConfigError, match="is not a Python project"):
        requirement(str(tmp_path))


def test_install_prints_the_pip_command_it_runs() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "agenthub", "install", "--dry-run", "env-foo", "--pip-args=--no-deps"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0
    assert done.stdout.strip() == f"$ {sys.executable} -m pip install agenthub-env-foo --no-deps"
