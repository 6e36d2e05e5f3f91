"""The built-in sub-commands, registered through the same hook a plugin would use.

Each command is one module of this package holding its arguments (``configure``), its action (``run``) and its
:class:`~agenthub.specs.CommandSpec` (``COMMANDS``); this module only lists them, in the order ``agenthub --help``
shows them. A command module is imported to build the parser, so it imports only what its arguments and
config need; its action imports the rest when it runs, which keeps ``agenthub --help`` fast.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from agenthub.hookimpl import hookimpl
from agenthub.specs import CommandSpec

COMMAND_MODULES = (
    "agenthub.cli.serve_command",
    "agenthub.cli.mcp_command",
    "agenthub.cli.plugins_command",
    "agenthub.cli.check_command",
    "agenthub.cli.play_command",
    "agenthub.cli.eval_command",
    "agenthub.cli.run_command",
    "agenthub.cli.export_command",
    "agenthub.cli.view_command",
    "agenthub.cli.report_command",
    "agenthub.cli.deploy_command",
    "agenthub.cli.init_command",
    "agenthub.cli.install_command",
)
"""The modules whose ``COMMANDS`` are agenthub's own sub-commands (install_command's: install, uninstall)."""


@hookimpl
def agenthub_register_commands(register: Callable[[CommandSpec], None]) -> None:
    for name in COMMAND_MODULES:
        for spec in importlib.import_module(name).COMMANDS:
            register(spec)
