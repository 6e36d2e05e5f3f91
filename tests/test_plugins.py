"""Plugin discovery through real entry points: distributions written to a temp dir on sys.path."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from agenthub import EnvSpec, PluginHost, UnknownNameError, hookimpl
from agenthub.types import TaskSplit


def write_distribution(root: Path, name: str, entry_point: str, module: str, source: str) -> None:
    """A minimal installed distribution: a module plus a .dist-info declaring one agenthub entry point."""
    (root / f"{module}.py").write_text(textwrap.dedent(source))
    info = root / f"{name.replace('-', '_')}-1.2.3.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.2.3\n")
    (info / "entry_points.txt").write_text(f"[agenthub]\n{entry_point} = {module}\n")


GOOD = """
from agenthub import CommandSpec, EnvSpec, TaskSplit, TrainerSpec, hookimpl

@hookimpl
def agenthub_register_envs(register):
    register(EnvSpec(name="fakecraft", factory="nowhere.module:Env", splits={"test": TaskSplit.range(0, 5)},
                     default_max_turns=30))

class EchoTrainer:
    def run(self, config, *, dry_run=False):
        print("would train with", sorted(config.items()), "dry run" if dry_run else "")
        return 0

@hookimpl
def agenthub_register_trainers(register):
    register(TrainerSpec(name="echo", factory=EchoTrainer, description="prints its config"))

def configure(parser):
    parser.add_argument("who")

def hello(args):
    print(f"hello {args.who} from a plugin command")
    return 3

@hookimpl
def agenthub_register_commands(register):
    register(CommandSpec(name="hello", help="greets", configure=configure, run=hello))
"""
BROKEN_IMPORT = "raise RuntimeError('this plugin is broken on purpose')\n"
BROKEN_HOOK = """
from agenthub import hookimpl

@hookimpl
def agenthub_register_agents(register):
    register("not a spec")
"""


@pytest.fixture
def plugin_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    write_distribution(tmp_path, "agenthub-env-fakecraft", "fakecraft", "fakecraft_plugin", GOOD)
    write_distribution(tmp_path, "agenthub-env-broken", "broken", "broken_plugin", BROKEN_IMPORT)
    write_distribution(tmp_path, "agenthub-agent-badhook", "badhook", "badhook_plugin", BROKEN_HOOK)
    monkeypatch.syspath_prepend(str(tmp_path))
    # Only these fakes (and the built-ins), whatever real plugins this environment has installed.
    monkeypatch.setenv("AGENTHUB_PLUGINS", "fakecraft,broken,badhook")
    yield tmp_path
    for module in ("fakecraft_plugin", "broken_plugin", "badhook_plugin"):
        sys.modules.pop(module, None)


def test_entry_point_plugins_load_and_broken_ones_are_reported(plugin_dir: Path) -> None:
    host = PluginHost()
    assert host.env("fakecraft").version == "1.2.3"  # filled from the distribution
    assert "this plugin is broken on purpose" in host.records["broken"].errors[0]
    assert "must register AgentSpec objects" in host.records["badhook"].errors[0]
    assert "guess" in host.envs  # the built-ins still work
    assert {r.name for r in host.failures()} == {"broken", "badhook"}


def test_plugin_trainers_and_commands_are_usable(plugin_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    host = PluginHost()
    assert host.trainer("echo").make().run({"env": "guess"}, dry_run=True) == 0
    assert "would train with [('env', 'guess')] dry run" in capsys.readouterr().out
    assert host.records["fakecraft"].registered == {"env": ["fakecraft"], "trainer": ["echo"], "command": ["hello"]}
    env = {"PYTHONPATH": str(plugin_dir), "PATH": "/usr/bin:/bin", "AGENTHUB_PLUGINS": "fakecraft,broken,badhook"}
    out = subprocess.run([sys.executable, "-m", "agenthub", "hello", "world"], capture_output=True, text=True, env=env)
    assert (out.returncode, out.stdout.strip()) == (3, "hello world from a plugin command")


def test_unknown_name_suggests_and_lists(plugin_dir: Path) -> None:
    host = PluginHost()
    with pytest.raises(UnknownNameError) as caught:
        host.env("fakecarft")
    message = str(caught.value)
    assert "unknown env 'fakecarft'; did you mean 'fakecraft'?" in message
    assert "installed envs: fakecraft, guess" in message
    assert "failed to load: badhook, broken" in message


def test_env_var_loads_only_named_plugins(plugin_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTHUB_PLUGINS", "fakecraft")
    host = PluginHost()
    assert set(host.records) == {"builtin", "builtin-commands", "fakecraft"}
    monkeypatch.setenv("AGENTHUB_PLUGINS", "")
    assert "fakecraft" not in PluginHost().envs


def test_duplicate_names_keep_the_first_and_report_the_second() -> None:
    class Duplicate:
        @hookimpl
        def agenthub_register_envs(self, register):  # type: ignore[no-untyped-def]
            register(EnvSpec(name="guess", factory=dict, splits={"a": TaskSplit.range(0, 1)}, default_max_turns=1))

    host = PluginHost(load_entry_points=False, extra_plugins=[Duplicate()])
    assert host.env("guess").factory == "agenthub.builtin.guess:GuessNumberEnv"
    assert "registered by both 'builtin' and 'Duplicate'" in host.records["Duplicate"].errors[0]


def test_lookup_does_not_import_the_env_package(plugin_dir: Path) -> None:
    host = PluginHost()
    spec = host.env("fakecraft")  # its factory module does not exist: only make() may import it
    with pytest.raises(Exception, match=r"cannot import 'nowhere\.module'"):
        spec.make()


def test_plugins_command_lists_versions_and_errors(plugin_dir: Path) -> None:
    env = {"PYTHONPATH": str(plugin_dir), "PATH": "/usr/bin:/bin", "AGENTHUB_PLUGINS": "fakecraft,broken,badhook"}
    out = subprocess.run(
        [sys.executable, "-m", "agenthub", "plugins", "--json"], capture_output=True, text=True, env=env, check=True
    )
    records = {r["name"]: r for r in json.loads(out.stdout)}
    assert records["fakecraft"]["version"] == "1.2.3"
    assert records["fakecraft"]["registered"]["env"] == ["fakecraft"]
    assert records["broken"]["errors"]
    assert "guess" in records["builtin"]["registered"]["env"]
    table = subprocess.run(
        [sys.executable, "-m", "agenthub", "plugins"], capture_output=True, text=True, env={**env, "COLUMNS": "200"}
    )
    assert table.returncode == 0 and "fakecraft" in table.stdout and "broken on purpose" in table.stdout


def test_trace_env_var_prints_hook_calls(plugin_dir: Path) -> None:
    env = {"PYTHONPATH": str(plugin_dir), "PATH": "/usr/bin:/bin", "AGENTHUB_TRACE_PLUGINS": "1"}
    out = subprocess.run(
        [sys.executable, "-m", "agenthub", "plugins", "--json"], capture_output=True, text=True, env=env
    )
    assert "plugin 'fakecraft' agenthub_register_envs -> ['fakecraft']" in out.stderr
