"""Every plugin in ``plugins/`` installs by its short name, learnt from its distribution, not from a list.

``agenthub install NAME`` reads the kind of a bare NAME from the plugin distributions it can see (the
checkout's ``plugins/``, ``--find-links`` folders, this interpreter): a new folder needs no edit in core.
"""

from __future__ import annotations

import shlex
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest

from agenthub.cli import install_command, plugin_catalogue
from agenthub.cli.install_command import distribution, resolve
from agenthub.cli.main import main
from agenthub.errors import ConfigError, UnknownNameError
from agenthub.plugins import PluginHost

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = sorted(p.parent for p in (ROOT / "plugins").glob("*/*/pyproject.toml"))


def kind_of(folder: Path) -> str:
    return folder.parent.name.removesuffix("s")  # plugins/envs/NAME -> env


def test_the_plugins_folder_holds_every_kind() -> None:
    assert {kind_of(f) for f in FOLDERS} == {"env", "agent", "trainer"}
    assert {"webarena", "search"} <= {f.name for f in FOLDERS}  # the two the old hand-written list missed


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda f: f"{f.parent.name}/{f.name}")
def test_each_plugin_folder_is_named_as_its_distribution(folder: Path) -> None:
    """The folder's name is the distribution's short name, of the folder's kind: what the resolver relies on."""
    name = tomllib.loads((folder / "pyproject.toml").read_text())["project"]["name"]
    assert name == f"agenthub-{kind_of(folder)}-{folder.name}"


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda f: f"{f.parent.name}/{f.name}")
def test_each_plugin_resolves_by_its_short_name(folder: Path) -> None:
    kind = kind_of(folder)
    for form in (folder.name, f"{kind}-{folder.name}", f"agenthub-{kind}-{folder.name}"):
        target = resolve(form)
        assert (target.in_checkout, target.project, target.kind) == (True, folder, kind), form
    assert distribution(folder.name) == f"agenthub-{kind}-{folder.name}"


def test_install_dry_run_takes_every_folder_by_its_short_name() -> None:
    """The command itself, for all of them at once: each plugin's folder is in a command it would run."""
    done = subprocess.run(
        [sys.executable, "-m", "agenthub", "install", "--dry-run", "--installer", "pip", "--variant", "cpu",
         *(f.name for f in FOLDERS)],
        capture_output=True, text=True, timeout=120, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    ran = [shlex.split(line[2:]) for line in done.stdout.splitlines() if line.startswith("$ ")]
    for folder in FOLDERS:
        assert any(str(folder) in word for command in ran for word in command), folder
    uninstall = subprocess.run(
        [sys.executable, "-m", "agenthub", "uninstall", "--dry-run", "webarena", "search"],
        capture_output=True, text=True, timeout=60, cwd=ROOT,
    )  # fmt: skip
    assert uninstall.returncode == 0, uninstall.stderr
    assert uninstall.stdout.split()[-2:] == ["agenthub-env-webarena", "agenthub-env-search"]


def test_a_wheelhouse_names_the_kind_of_a_plugin_not_in_the_checkout(tmp_path: Path) -> None:
    """Outside the checkout (core from a wheel), --find-links folders say which plugins exist: by file name."""
    (tmp_path / "agenthub_env_wheelonly-0.1.0-py3-none-any.whl").touch()
    (tmp_path / "agenthub_trainer_sdistonly-0.2.0.tar.gz").touch()
    (tmp_path / "unrelated-1.0-py3-none-any.whl").touch()
    with pytest.raises(ConfigError, match="unknown plugin 'wheelonly'; say its kind"):
        resolve("wheelonly")
    target = resolve("wheelonly[test]", [str(tmp_path)])
    assert (target.distribution, target.requirement, target.kind) == (
        "agenthub-env-wheelonly", "agenthub-env-wheelonly[test]", "env"
    )  # fmt: skip
    assert resolve("sdistonly", [f"file://{tmp_path}"]).distribution == "agenthub-trainer-sdistonly"
    # a URL is pip's to read, not ours; it adds nothing
    assert plugin_catalogue.catalogue(None, ["https://example.invalid/simple"]) == plugin_catalogue.catalogue(None)


def test_installed_plugins_are_known_without_a_checkout(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(plugin_catalogue, "shipped", lambda: iter(()))  # the installed ones alone
    installed = {
        found[1]: found[0]
        for dist in metadata.distributions()
        if (found := plugin_catalogue.plugin_of(dist.metadata["Name"] or "")) is not None
    }
    assert installed, "this environment has the env plugins installed"
    assert plugin_catalogue.catalogue(None) == dict(sorted(installed.items()))


def test_a_name_two_kinds_share_needs_its_kind(tmp_path: Path) -> None:
    for kind, name in [("env", "twin"), ("agent", "twin"), ("env", "solo"), ("trainer", "misfiled")]:
        folder = tmp_path / f"{kind}s" / name
        folder.mkdir(parents=True)
        project = f"agenthub-{'env' if name == 'misfiled' else kind}-{name}"  # an env's project in trainers/
        (folder / "pyproject.toml").write_text(f'[project]\nname = "{project}"\nversion = "0"\n')
    known = plugin_catalogue.catalogue(tmp_path)
    assert known["solo"] == "env" and "twin" not in known and known.get("misfiled") != "trainer"
    assert plugin_catalogue.plugin_of("Agenthub_Env.Foo_Bar") == ("env", "foo-bar")
    assert plugin_catalogue.plugin_of("agenthub-envs-foo") is None


def test_the_shipped_list_is_the_plugins_folder() -> None:
    """Core's package data names every plugin folder, so a plugin added without it fails here, saying the fix."""
    shipped, folders = dict(plugin_catalogue.shipped()), dict(plugin_catalogue.in_checkout(ROOT / "plugins"))
    stale = sorted(f'{n} = "{k}"' for n, k in shipped.items() if folders.get(n) != k)
    missing = sorted(f'{n} = "{k}"' for n, k in folders.items() if shipped.get(n) != k)
    assert shipped == folders, (
        f"core/agenthub/cli/{plugin_catalogue.SHIPPED} differs from plugins/: add {missing}, drop {stale}; "
        f"at the checkout's root run `{plugin_catalogue.REGENERATE}`"
    )
    text = (ROOT / "core" / "agenthub" / "cli" / plugin_catalogue.SHIPPED).read_text(encoding="utf-8")
    assert text == plugin_catalogue.render(ROOT / "plugins"), f"run `{plugin_catalogue.REGENERATE}`"


def test_pyproject_ships_the_list_in_cores_wheel() -> None:
    package_data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    assert f"cli/{plugin_catalogue.SHIPPED}" in package_data["agenthub"]


@pytest.fixture
def released(monkeypatch: pytest.MonkeyPatch) -> None:
    """Core as `pip install agenthub` leaves it: no checkout, no plugin distribution installed."""
    monkeypatch.setattr(install_command, "_checkout_root", lambda: None)
    monkeypatch.setattr(plugin_catalogue, "installed", lambda: iter(()))
    # FIRST_PARTY keeps what it read first: a fresh one reads the sources patched above
    monkeypatch.setattr(install_command, "FIRST_PARTY", plugin_catalogue.LazyCatalogue(lambda: None))


@pytest.mark.usefixtures("released")
def test_a_release_installs_sciworld_by_its_short_name(capsys: pytest.CaptureFixture[str]) -> None:
    """README's promise, `pip install agenthub` then `agenthub install sciworld`: the index's distribution."""
    assert main(["install", "--dry-run", "--installer", "pip", "sciworld"]) == 0
    ran = [shlex.split(line[2:]) for line in capsys.readouterr().out.splitlines() if line.startswith("$ ")]
    assert ran == [[sys.executable, "-m", "pip", "install", "agenthub-env-sciworld"]]
    assert main(["uninstall", "--dry-run", "trl"]) == 0
    assert capsys.readouterr().out.split()[-1] == "agenthub-trainer-trl"


@pytest.mark.usefixtures("released")
def test_without_the_shipped_list_a_release_asks_for_the_kind(monkeypatch: pytest.MonkeyPatch) -> None:
    """The shipped list is what names sciworld there: without it, the kind must be given."""
    assert resolve("sciworld").distribution == "agenthub-env-sciworld"
    monkeypatch.setattr(install_command, "FIRST_PARTY", plugin_catalogue.LazyCatalogue(lambda: None))
    monkeypatch.setattr(plugin_catalogue, "shipped", lambda: iter(()))
    with pytest.raises(ConfigError, match="unknown plugin 'sciworld'; say its kind"):
        resolve("sciworld")
    assert resolve("env-sciworld").requirement == "agenthub-env-sciworld"


def test_a_missing_first_party_plugin_is_named_with_its_install_command() -> None:
    """The lookup's hint reads the shipped list (no checkout or listing of distributions needed)."""
    host = PluginHost(load_entry_points=False)  # the built-ins only: no plugin distribution loaded
    with pytest.raises(UnknownNameError, match=r"install it with `agenthub install env-sciworld`"):
        host.env("sciworld")
    with pytest.raises(UnknownNameError, match=r"install it with `agenthub install trainer-trl`"):
        host.trainer("trl")
    with pytest.raises(UnknownNameError) as wrong_kind:
        host.agent("sciworld")  # an env, not an agent: no install command that would not register it
    assert "plugin of its own" not in str(wrong_kind.value)
