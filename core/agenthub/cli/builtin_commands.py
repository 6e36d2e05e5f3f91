"""The built-in sub-commands, registered through the same hook a plugin would use.

Each command is one module of this package holding its arguments (``configure``), its action (``run``) and its
:class:`~agenthub.specs.CommandSpec` (``COMMANDS``); this module only lists them, in the order ``agenthub --help``
shows them. A command module is imported to build the parser, so it imports only what its arguments and
config need; its action imports the rest when it runs, which keeps ``agenthub --help`` fast.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable

from agenthub._version import __version__
from agenthub.cli.overrides import add_overrides
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
"""The modules whose ``COMMANDS`` are agenthub's own sub-commands."""

__all__ = ["COMMAND_MODULES", "add_overrides", "agenthub_register_commands"]


def _lazy(module: str, attr: str) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        return int(getattr(importlib.import_module(module), attr)(args))

    return run


def _configure_serve(parser: argparse.ArgumentParser) -> None:
    add_overrides(parser, "env=guess port=8000 max_sessions=256 ttl=600 token=SECRET mcp=true env_kwargs.high=32")
    parser.epilog = (
        "mcp=true: the same server also answers MCP (streamable HTTP) at /mcp, with the tools list_tasks, "
        "start_episode, act and end_episode; an MCP episode is one of its sessions, under the same max_sessions, "
        "ttl and token (needs agenthub[mcp]). agenthub mcp serves MCP alone, over stdio or HTTP. "
        "workers=N: N server processes answer the one port, each with its own sessions (max_sessions each) and "
        "its own port (port+1 .. port+N, which clients must reach); a create's Location names the session's "
        "worker, and EnvClient sends its calls there; a worker that exits is restarted, losing its sessions "
        "(docs/serving.md)."
    )
    parser.add_argument("--ready-file", default=None, help="write {url, pid} here once listening (used by launchers)")
    parser.add_argument(
        "--insecure",
        action="store_true",
        help="allow a host beyond loopback (e.g. host=0.0.0.0) with no token, on a trusted network",
    )


def _configure_install(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "names",
        nargs="+",
        metavar="NAME",
        help="sciworld, env-sciworld or agenthub-env-sciworld (the same plugin: this checkout's, where there is "
        "one and no version is given), trainer-verl[test], ./path or a .whl",
    )
    parser.add_argument("-e", "--editable", action="store_true", help="pip install -e (local paths)")
    parser.add_argument("--dry-run", action="store_true", help="print every install command; run none")
    parser.add_argument("--pip-args", default="", metavar="ARGS", help="more pip options, e.g. --pip-args='--no-deps'")
    parser.add_argument("--index-url", default=None, metavar="URL", help="the package index to use (passed to pip/uv)")
    parser.add_argument(
        "--extra-index-url", action="append", default=[], metavar="URL", help="another index (repeatable; to pip/uv)"
    )
    parser.add_argument(
        "--find-links",
        action="append",
        default=[],
        metavar="DIR_OR_URL",
        help="also look for wheels here, e.g. a local wheelhouse (repeatable; to pip/uv)",
    )
    parser.add_argument(
        "--variant",
        choices=["auto", "cpu", "gpu"],
        default="auto",
        help="which of a plugin's install recipes (install.toml) to run; auto: gpu where nvidia-smi or CUDA is found",
    )
    parser.add_argument(
        "--installer",
        choices=["auto", "uv", "pip"],
        default="auto",
        help="who runs a recipe's steps; auto: uv where it is installed (torch steps always use pip)",
    )


def _configure_uninstall(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("names", nargs="+", metavar="NAME", help="env-sciworld, sciworld, agenthub-env-x, ./path")
    parser.add_argument("--dry-run", action="store_true", help="print the pip command only")


_PENDING = {
    "agenthub.cli.serve_command": (
        CommandSpec(
            "serve",
            "Serve an environment over HTTP (protocol v1) until SIGTERM.",
            _configure_serve,
            _lazy("agenthub.cli.serve_command", "run"),
            __version__,
        ),
    ),
    "agenthub.cli.install_command": (
        CommandSpec(
            "install",
            "Install plugins by short name (env-sciworld, trainer-verl) or path, by the recipe a plugin ships.",
            _configure_install,
            _lazy("agenthub.cli.install_command", "run_install"),
            __version__,
        ),
        CommandSpec(
            "uninstall",
            "pip uninstall plugins by short name or path.",
            _configure_uninstall,
            _lazy("agenthub.cli.install_command", "run_uninstall"),
            __version__,
        ),
    ),
}


@hookimpl
def agenthub_register_commands(register: Callable[[CommandSpec], None]) -> None:
    for name in COMMAND_MODULES:
        module = importlib.import_module(name)
        for spec in getattr(module, "COMMANDS", None) or _PENDING[name]:
            register(spec)
