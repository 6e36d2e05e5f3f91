"""Each built-in command is one module: its arguments, its action and its spec. Building the parser (what
``agenthub --help`` does) imports those modules, so they must not import what only an action needs."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys

import pytest

from agenthub.cli.builtin_commands import COMMAND_MODULES
from agenthub.plugins import get_plugin_host
from agenthub.specs import CommandSpec

# What the actions need and the parser does not: servers, clients, the rollout, the viewer, the trainers' glue.
ACTION_ONLY = (
    "agenthub.service.serve",
    "agenthub.service.client",
    "agenthub.service.launcher",
    "agenthub.rollout.collect",
    "agenthub.rollout.executor",
    "agenthub.rollout.episode_loop",
    "agenthub.testing.conformance",
    "agenthub.viewer.api",
    "agenthub.deploy.k8s",
    "agenthub.training",
    "uvicorn",
    "rich.table",
    "asyncio",
    "agenthub.viewer.report",
    "agenthub.processes",
)


@pytest.mark.parametrize("name", COMMAND_MODULES)
def test_a_command_module_holds_its_arguments_and_its_action(name: str) -> None:
    module = importlib.import_module(name)
    specs = module.COMMANDS
    assert specs and all(isinstance(spec, CommandSpec) for spec in specs)
    for spec in specs:
        # defined in the module itself, not forwarded from another file
        assert spec.configure.__module__ == name, f"{spec.name}: arguments come from {spec.configure.__module__}"
        assert spec.run.__module__ == name, f"{spec.name}: action comes from {spec.run.__module__}"


def test_every_module_s_commands_are_registered_under_the_built_in_plugin() -> None:
    names = [spec.name for name in COMMAND_MODULES for spec in importlib.import_module(name).COMMANDS]
    assert len(names) == len(set(names))
    assert get_plugin_host().records["builtin-commands"].registered["command"] == names


def test_building_the_parser_imports_no_action_s_dependencies() -> None:
    script = (
        "import json, sys\n"
        "from agenthub.cli.main import build_parser\n"
        "build_parser()\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    env = {**os.environ, "AGENTHUB_PLUGINS": ""}  # the built-ins only: a plugin may import what it likes
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    loaded = set(json.loads(done.stdout))
    assert "agenthub.cli.eval_command" in loaded  # the command modules were imported ...
    assert sorted(m for m in ACTION_ONLY if m in loaded) == []  # ... and none of what their actions need
